"""Print non-blank lines per package and the largest files, so growth is visible in CI's output."""

import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "torch_trt"


def main():
    files = {path: sum(1 for line in path.read_text().splitlines() if line.strip()) for path in ROOT.rglob("*.py")}
    packages = collections.Counter()
    for path, lines in files.items():
        packages[str(path.parent.relative_to(ROOT.parent))] += lines
    for package, lines in sorted(packages.items()):
        print(f"{lines:6d}  {package}/")
    print(f"{sum(files.values()):6d}  total")
    for path, lines in sorted(files.items(), key=lambda item: -item[1])[:5]:
        print(f"{lines:6d}  largest: {path.relative_to(ROOT.parent)}")


if __name__ == "__main__":
    main()
