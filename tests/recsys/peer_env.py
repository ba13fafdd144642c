"""Build the environment with the recommender toolkits rankwise's recsys profiles are checked
against: RecBole, LensKit and Microsoft recommenders.

    python tests/recsys/peer_env.py            # builds .venv-recsys-peers (idempotent)
    python tests/recsys/peer_env.py --force    # rebuilds it

They are kept out of the project's own environment: RecBole 1.2.1 pulls torch and ray 2.6,
LensKit 2025.8 needs pandas < 3, Microsoft recommenders pulls Jupyter and more. Each toolkit
is installed on its own, so one that fails to install leaves the others usable; the outcome
is written to ``<env>/rankwise-peers.json`` (``{"toolkits": {name: "ok" | "failed: ..."}}``)
and the script prints that file's path. A second run with the same requirements does nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_ENV = os.path.join(ROOT, ".venv-recsys-peers")
#: installed first: the CPU build of torch, which RecBole and LensKit then use (without it pip
#: pulls a CUDA build of several GB)
BASE = ["torch==2.13.0"]
#: toolkit -> pip requirements, in install order
TOOLKITS = {
    "recbole": ["recbole==1.2.1"],
    "lenskit": ["lenskit==2025.8.1"],
    "ms_recommenders": ["recommenders==1.2.1"],
}
STATUS = "rankwise-peers.json"


def python_of(env: str) -> str:
    return os.path.join(env, "Scripts" if os.name == "nt" else "bin",
                        "python.exe" if os.name == "nt" else "python")


def build(env: str = DEFAULT_ENV, force: bool = False) -> dict:
    """Create the environment and install every toolkit that installs; return the status."""
    status_path = os.path.join(env, STATUS)
    if force and os.path.isdir(env):
        shutil.rmtree(env)
    if os.path.exists(status_path):
        with open(status_path) as f:
            status = json.load(f)
        if status.get("requirements") == TOOLKITS and status.get("base") == BASE:
            return status
    if not os.path.exists(python_of(env)):
        venv.EnvBuilder(with_pip=True, clear=True).create(env)
    python = python_of(env)
    status = {"requirements": TOOLKITS, "base": BASE, "toolkits": {}, "python": python}
    subprocess.run([python, "-m", "pip", "install", "--quiet", *BASE], capture_output=True)
    for name, requirements in TOOLKITS.items():
        done = subprocess.run([python, "-m", "pip", "install", "--quiet", *requirements],
                              capture_output=True, text=True)
        if done.returncode == 0:
            status["toolkits"][name] = "ok"
        else:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            status["toolkits"][name] = "failed: " + " | ".join(tail)
    freeze = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True)
    status["versions"] = {line.split("==")[0].lower(): line.split("==")[1]
                          for line in freeze.stdout.splitlines() if "==" in line}
    with open(status_path, "w") as f:
        json.dump(status, f, indent=2)
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default=DEFAULT_ENV)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    status = build(args.env, args.force)
    print(os.path.join(args.env, STATUS))
    for name, outcome in status["toolkits"].items():
        print(f"{name}: {outcome}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
