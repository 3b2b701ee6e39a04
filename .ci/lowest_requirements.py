"""Print `name==floor` for each runtime dependency of pyproject.toml that applies to this
Python: the lowest version its range allows (its `>=` bound). CI installs these and runs
the parser and rule-sample tests on them, so every range we declare is known to work."""
import sys
import tomllib

from packaging.requirements import Requirement

with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f)["project"]["dependencies"]
pins = []
for line in deps:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate():
        continue
    floors = [s.version for s in req.specifier if s.operator == ">="]
    if len(floors) != 1:
        sys.exit(f"{line}: give one '>=' lower bound, so that CI can test it")
    pins.append(f"{req.name}=={floors[0]}")
print(" ".join(pins))
