from pheron_tui.cli import main

raise SystemExit(main())
