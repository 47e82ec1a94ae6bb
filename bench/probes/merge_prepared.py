"""Merge two `gpu_suite.py prepare` directories into one, so that one `gpu_suite.py run` times both side by side.

The rows of NEW are kept as they are, those of OLD are added as `NAME~TAG`; `--rows REGEX` keeps only the rows
whose name matches (in both). Rows already in OUT stay (merge several pairs into one directory). Typically NEW is the working tree's prepare and OLD a prepare at an earlier commit
(installed elsewhere, e.g. `pip install --target`), both made on the CPU:

    python bench/probes/merge_prepared.py /tmp/prepCUR /tmp/prepHEAD old .gpu/m31 --rows 'rmsnorm_matmul|matmul_rowsum'
    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/gpu_suite.py run $OLDPWD/.gpu/m31 --out $OUT/m31.json'
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new", type=Path)
    ap.add_argument("old", type=Path)
    ap.add_argument("tag")
    ap.add_argument("out", type=Path)
    ap.add_argument("--rows", default="", help="only rows whose name matches this regex")
    a = ap.parse_args()
    pattern = re.compile(a.rows)
    (a.out / "kernels").mkdir(parents=True, exist_ok=True)
    new, old = (json.loads((d / "manifest.json").read_text()) for d in (a.new, a.old))
    merged = {k: v for k, v in new.items() if k != "entries"}
    merged["command"] = f"{new.get('command')} (rows); {old.get('command')} (rows ~{a.tag}), merged by bench/probes/merge_prepared.py"
    have = a.out / "manifest.json"
    entries: dict[str, dict] = json.loads(have.read_text())["entries"] if have.exists() else {}
    for source, tag in ((a.new, ""), (a.old, f"~{a.tag}")):
        manifest = new if tag == "" else old
        for e in manifest["entries"].values():
            if not pattern.search(e["row"]):
                continue
            e = dict(e)
            e["row"] += tag
            module = f"kernels/{e['row']}__{e['variant']}.py"
            shutil.copy(source / e["module"], a.out / module)
            e["module"] = module
            if e.get("pipeline"):  # the pipeline module `gpu_suite.py tune` reads the candidates from
                pipeline = f"kernels/{e['row']}__{e['variant']}.mlir"
                shutil.copy(source / e["pipeline"], a.out / pipeline)
                e["pipeline"] = pipeline
            if e.get("tuned"):  # a tuned winner's module travels with its row
                tuned = dict(e["tuned"], module=f"kernels/{e['row']}__{e['variant']}.tuned.py")
                shutil.copy(source / e["tuned"]["module"], a.out / tuned["module"])
                e["tuned"] = tuned
            entries[f"{e['row']}__{e['variant']}"] = e
    merged["entries"] = entries
    (a.out / "manifest.json").write_text(json.dumps(merged, indent=1))
    print(f"{len(entries)} rows into {a.out}")


if __name__ == "__main__":
    main()
