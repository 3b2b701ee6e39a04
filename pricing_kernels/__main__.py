"""`python -m pricing_kernels`: see cli.py."""
import sys

from .cli import main

sys.exit(main())
