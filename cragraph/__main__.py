from cragraph.cli.main import main

raise SystemExit(main())
