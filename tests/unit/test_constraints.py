"""constraints*.txt hold what `make setup` installs: one exact version per package, each inside the range its
requirements file accepts, so that a fresh install is the set `make test` last passed with."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
# each virtualenv of `make setup`: the requirements it installs and the constraints it installs them with
VIRTUALENVS = {
    "constraints.txt": ["requirements-dev.txt"],
    "constraints-dynamo.txt": ["requirements-dynamo.txt", "requirements-dynamo-deps.txt"],
}


def requirement_lines(name: str) -> list[Requirement]:
    out = []
    for raw in (REPO / name).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("-r "):
            out += requirement_lines(line[3:].strip())
        elif line:
            out.append(Requirement(line))
    return out


def pins(name: str) -> dict[str, Version]:
    found: dict[str, Version] = {}
    for raw in (REPO / name).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        package, sep, version = line.partition("==")
        assert sep and version, f"{name}: '{line}' is not an exact pin (name==version)"
        key = canonicalize_name(package)
        assert key not in found, f"{name} pins {package} twice"
        found[key] = Version(version)
    return found


@pytest.mark.parametrize("constraints", sorted(VIRTUALENVS))
def test_every_requirement_is_pinned_within_its_range(constraints):
    pinned = pins(constraints)
    problems = []
    for requirements in VIRTUALENVS[constraints]:
        for req in requirement_lines(requirements):
            version = pinned.get(canonicalize_name(req.name))
            if version is None:
                problems.append(f"{req.name} ({requirements}) is not pinned")
            elif not req.specifier.contains(version, prereleases=True):
                problems.append(f"{req.name}=={version} is outside {requirements}'s '{req.specifier}'")
    assert not problems, f"{constraints}: " + "; ".join(problems) + " (make constraints refreezes it)"


@pytest.mark.parametrize("constraints", sorted(VIRTUALENVS))
def test_pip_itself_is_pinned(constraints):
    # `make setup` upgrades pip first: an unpinned pip is a resolver that changes from one install to the next
    assert "pip" in pins(constraints)


def test_the_cryptography_that_broke_the_awx_event_stream_stays_out():
    assert pins("constraints.txt")["cryptography"] < Version("51")
