"""``python -m novel_desktop`` starts the desktop application."""

import sys

from novel_desktop.app import main

sys.exit(main())
