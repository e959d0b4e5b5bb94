"""Thin click commands over the library. ``puffin_cli.cli.main:main`` is the console script."""
