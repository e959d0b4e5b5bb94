from puffin_cli.cli.main import main

main()
