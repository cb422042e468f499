"""Benchmark: the HTML report of a large audit (20,000 findings) - its size and how fast it is usable.

    python benchmarks/report_bench.py [--findings 20000] [--repeat 3]

Audits convert_bench.py's generated corpus (about 7,000 findings per 300,000 lines), grows the
corpus until the audit has at least --findings findings, renders the report, then opens it in
headless chromium (Debian's, through chromedriver) and reads the page's navigation timing: the
load event fires after the table script has parsed every finding and drawn the first page.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from portkit.cli.app import main as portkit

    with tempfile.TemporaryDirectory(prefix="portkit-report-bench-") as tmp:
        corpus, lines = Path(tmp) / "corpus", 300_000
        while True:
            generate(corpus, lines)
            assert portkit(["audit", str(corpus), "--format", "json", "-o", f"{tmp}/a.json", "-j", "2"]) == 0
            doc = json.loads(Path(f"{tmp}/a.json").read_text())
            if len(doc["findings"]) >= args.findings:
                break
            lines = int(lines * args.findings / len(doc["findings"]) * 1.05)
        report = Path(tmp) / "report.html"
        start = time.perf_counter()
        assert portkit(["report", f"{tmp}/a.json", "-o", str(report)]) == 0
        render_s = time.perf_counter() - start
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp}/profile"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        try:
            loads = []
            for _ in range(args.repeat):
                driver.get(report.as_uri())
                timing = driver.execute_script(
                    "var t = performance.timing; return [t.loadEventEnd - t.navigationStart,"
                    " document.querySelectorAll('#findings tbody tr').length,"
                    " document.getElementById('filter-count').textContent];")
                loads.append(timing[0] / 1000)
            print(json.dumps({"findings": len(doc["findings"]), "corpus_lines": lines,
                              "report_mb": round(report.stat().st_size / 1e6, 2), "render_s": round(render_s, 3),
                              "usable_s_best": round(min(loads), 3), "usable_s_worst": round(max(loads), 3),
                              "rows_drawn": timing[1], "counter": timing[2]}))
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
