from cragraph.cli import main

raise SystemExit(main())
