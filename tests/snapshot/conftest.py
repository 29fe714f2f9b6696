import sys
from pathlib import Path

# factory.py sits beside the tests; make it importable without a package.
sys.path.insert(0, str(Path(__file__).parent))
