"""The documentation: its generated parts are up to date, and the site builds in strict mode, offline.

`mkdocs build --strict` turns every warning into an error: a link to a missing page or anchor, a page left out of the
nav, a nav entry without its page. The theme's web fonts are off (`theme.font: false`), so nothing is fetched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rewardloop import docs

ROOT = Path(__file__).resolve().parents[1]


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `config` into `site`, with no network proxy a fetch could use."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "http_proxy": "http://127.0.0.1:9", "https_proxy":
           "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_generated_pages_are_up_to_date():
    stale = docs.stale_files(ROOT)
    assert not stale, f"run `python -m rewardloop.docs`: out of date: {[str(p.relative_to(ROOT)) for p in stale]}"


def test_the_site_builds_strictly(tmp_path):
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "index.html").is_file()


def test_a_broken_link_fails_the_build(tmp_path):
    # the same configuration on a copy of the pages with one link to a page that does not exist
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    loop = tmp_path / "docs" / "loop.md"
    loop.write_text(loop.read_text() + "\nSee [the missing page](missing.md).\n")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "missing.md" in result.stderr


def test_every_docs_table_of_results_names_its_file_and_command():
    for page, text in docs._pages(ROOT).items():
        for marker in docs.markers(text):
            body = text.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]
            assert "benchmarks/results/" in body or "tests/data/" in body or "rewardloop/control/gaits/" in body, \
                f"{page}: the table {marker} names no data file"
            assert re.search(r"`(rewardloop |benchmarks/|python )[^`]*`", body) or "found_by" in body, \
                f"{page}: the table {marker} names no command"


def test_fill_section_replaces_between_markers_only():
    text = "a\n<!-- results:x -->\nold\n<!-- /results:x -->\nb\n"
    assert docs.fill_section(text, "results:x", "new") == "a\n<!-- results:x -->\nnew\n<!-- /results:x -->\nb\n"
    with pytest.raises(ValueError, match="needs one line"):
        docs.fill_section("no markers", "results:x", "new")


def test_the_readme_links_to_files_that_exist():
    text = (ROOT / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)", text) if "://" not in t]
    assert targets, "the README links to the docs"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_a_results_files_note_stays_in_the_file_and_the_index_not_in_the_tables():
    # A table's provenance is one line (file, command, commit, date, machine); a data file's long note is read in
    # the file itself and in INDEX.md.
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    index = (ROOT / "benchmarks" / "results" / "INDEX.md").read_text()
    noted = 0
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        note = json.loads(path.read_text()).get("note")
        if isinstance(note, str) and len(note) > 80 and f"`{path.name}`: " in index:
            noted += 1
            assert note[:80] not in text, f"{path.name}'s note is in a docs page"
            assert note in index
    assert noted >= 3
