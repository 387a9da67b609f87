from cragraph_lab.cli.main import main

raise SystemExit(main())
