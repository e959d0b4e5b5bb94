"""Analyses over a read Puffin file: inspection (and, later, validation and table checks)."""
