from cragraph.cli.main import entry

entry()
