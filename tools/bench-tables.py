#!/usr/bin/env python3
"""Writes the current benchmark tables into bench/README.md from the runs' raw output.

Each file bench/results/NAME.txt is the output of the newest run of one topic, as the benchmark
tools printed it (lines starting with '#' say what was run, and are not read otherwise), and
bench/README.md holds its table between the lines `<!-- table:NAME -->` and
`<!-- end table:NAME -->`; this script rewrites what lies between them, and nothing else. It
reads the tools' formats:
  - bench/suite_compare.py and bench/lenet_compare.py (tools/bench-suite.sh, tools/bench-lenet.sh):
    the comparison table and the targets' rounds, one block per run, several blocks to a file;
  - tools/bench-data-parallel.sh: the five-way rounds and medians;
  - bench/kernels (tools/bench-kernels.sh) with --benchmark_filter='^gemm': the GEMMs' GFLOP/s, the
    median over the runs in the file;
  - a transcription, for runs whose printed output was not kept: `measured on: TEXT` lines, each
    followed by a Markdown table of the figures as they were recorded.
Each table opens with a "Measured on" line: the date, the CPU and its kernels, the peer's version
and the load average, as the run printed them (or, for a transcription, its `measured on` line).

Usage: tools/bench-tables.py [--check] [--readme FILE] [--results DIR]
  --check  write nothing; exit 1 if the README is not what this script would write.
Standard library only; the same input gives the same README, so a second run changes nothing.
"""
import argparse
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^<!-- table:([A-Za-z0-9_.-]+) -->$")


class Error(Exception):
    pass


def number(value, digits=0):
    """A figure as the README writes it: thousands separated by commas."""
    return f"{value:,.{digits}f}"


def median(values):
    return statistics.median(values)


# ---------------------------------------------------------------------------------------------
# bench/suite_compare.py and bench/lenet_compare.py

SUITE_HEADER = re.compile(r"^network\s+configuration\s+implementation\s+images/s")
LENET_HEADER = re.compile(r"^configuration\s+implementation\s+images/s")
ROW = re.compile(r"^(?P<left>.*?)\s+(?P<ips>\d+) \((?P<lo>\d+)-(?P<hi>\d+)\)\s+(?P<ratio>[\d.]+)x\s+"
                 r"(?P<gflops>[\d.]+)\s+(?P<pct>[\d.]+)%\s+(?P<rss>\d+)(?:\s+(?P<acc>[\d.]+))?$")
TARGET = re.compile(r"^  (?P<left>.*?)\s+speed (?P<ratio>[\d.]+)x \(target (?P<target>[\d.]+)x: (?P<met>met|NOT met); "
                    r"rounds (?P<rounds>[\d. ]+)\)")


def parse_compare(lines, start, name):
    """Parses one comparison table from its header line; returns (block, index after it)."""
    suite = bool(SUITE_HEADER.match(lines[start]))
    block = {"rows": [], "targets": {}, "suite": suite, "info": {}}
    i = start + 2  # the header and its rule
    network = config = ""
    while i < len(lines) and lines[i].strip():
        line = lines[i]
        i += 1
        if line.strip().startswith("work per image:"):
            continue
        m = ROW.match(line)
        if not m:
            raise Error(f"{name}: a comparison row not understood: {line!r}")
        left = m["left"]
        if suite:
            network = left[:8].strip() or network
            config = left[9:31].strip() or config
            label = left[32:].strip()
        else:
            config = left[:22].strip() or config
            label = left[23:].strip()
        block["rows"].append({"network": network, "config": config, "label": label, "ips": int(m["ips"]),
                              "lo": int(m["lo"]), "hi": int(m["hi"]), "ratio": float(m["ratio"]),
                              "pct": float(m["pct"]), "rss": int(m["rss"]), "acc": m["acc"]})
    # The targets against the first peer: each round's ratio.
    while i < len(lines) and not (SUITE_HEADER.match(lines[i]) or LENET_HEADER.match(lines[i])
                                  or lines[i].startswith(("Training on the CPU", "LeNet training on the CPU"))):
        m = TARGET.match(lines[i])
        if m:
            left = m["left"].split(None, 1) if suite else ["", m["left"]]
            if len(left) == 2:
                block["targets"][(left[0], left[1].strip())] = m["rounds"].split()
        i += 1
    return block, i


def run_info(lines, start, end):
    """The machine and the load a comparison printed above its table (lines start..end)."""
    info = {}
    for line in lines[start:end]:
        m = re.match(r"^(?:Training on the CPU, synthetic data|LeNet training on the CPU), (\d{4}-\d\d-\d\d): (.*)$",
                     line)
        if m:
            info["date"], info["machine"] = m[1], m[2]
        if line.startswith("nn::cpuInfo(): "):
            info["cpu"] = line[len("nn::cpuInfo(): "):]
        m = re.match(r"^sgemm .*median of rounds: 1 thread ([\d.]+) GFLOP/s, 2 threads ([\d.]+) GFLOP/s", line)
        if m:
            info["sgemm"] = (float(m[1]), float(m[2]))
        m = re.match(r"^load average .*before the rounds: ([\d.]+) \S+ \S+, after: ([\d.]+)", line)
        if m:
            info["load"] = (float(m[1]), float(m[2]))
        if line.startswith("precision: "):
            info["precision"] = line
        m = re.match(r"^batch (\d+)", line)
        if m:
            info["batch"] = int(m[1])
    return info


def parse_compares(lines, name):
    blocks, i, info_start = [], 0, 0
    while i < len(lines):
        if SUITE_HEADER.match(lines[i]) or LENET_HEADER.match(lines[i]):
            block, after = parse_compare(lines, i, name)
            block["info"] = run_info(lines, info_start, i)
            blocks.append(block)
            info_start = i = after
        else:
            i += 1
    return blocks


def peer_name(label):
    return label[:-len(" DDP")] if label.endswith(" DDP") else label


def ours(label):
    return label.startswith("nn")


def products(label):
    """The bfloat16 products a run at the precision medium names: 'nn (this project, AMX)' -> AMX."""
    m = re.search(r", /?([^(),]+?)\)?$", label)
    return m[1] if m else ""


def spread(row):
    return f"{number(row['ips'])} ({number(row['lo'])}-{number(row['hi'])})"


def measured_compare(blocks):
    dates = sorted({b["info"].get("date", "") for b in blocks} - {""})
    cpus = sorted({b["info"].get("cpu") or b["info"].get("machine", "") for b in blocks} - {""})
    peers = sorted({peer_name(r["label"]) for b in blocks for r in b["rows"] if not ours(r["label"])})
    parts = [" to ".join([dates[0], dates[-1]] if len(dates) > 1 else dates)] if dates else []
    parts += cpus
    sgemm = [b["info"]["sgemm"] for b in blocks if "sgemm" in b["info"]]
    if sgemm:
        one, two = [x[0] for x in sgemm], [x[1] for x in sgemm]
        span = (lambda v: f"{min(v):.1f}" if min(v) == max(v) else f"{min(v):.1f}-{max(v):.1f}")
        parts.append(f"sgemm {span(one)} GFLOP/s on 1 thread, {span(two)} on 2")
    if peers:
        parts.append("against " + ", ".join(peers))
    loads = [x for b in blocks if "load" in b["info"] for x in b["info"]["load"]]
    if loads:
        parts.append(f"load average {min(loads):.2f} to {max(loads):.2f}")
    return "Measured on: " + "; ".join(parts) + "."


def render_compare(blocks):
    """One table of every comparison block: our images/s beside each peer's, the ratio and its rounds."""
    medium = any("precision" in b["info"] for b in blocks)
    several = len(blocks) > 1
    peers = []
    for b in blocks:
        for r in b["rows"]:
            if not ours(r["label"]) and peer_name(r["label"]) not in peers:
                peers.append(peer_name(r["label"]))
    suite = blocks[0]["suite"]
    head = (["network"] if suite else []) + ["configuration"]
    if medium:
        head.append("this project's products")
    head.append("this project")
    for p in peers:
        head += [p, "ratio (rounds)" if p == peers[0] else "ratio"]
    if not medium:
        head.append("of sgemm (ours, " + ("theirs" if len(peers) == 1 else peers[0]) + ")")
        head.append("peak RSS (ours, " + ("theirs" if len(peers) == 1 else peers[0]) + ")")
    if any(r["acc"] for b in blocks for r in b["rows"]):
        head.append("test accuracy (ours, " + ("theirs" if len(peers) == 1 else peers[0]) + ")")
    if several:
        head.append("load before, after")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for b in blocks:
        previous = None
        # Each configuration: our row, then the peers' rows.
        groups = []
        for r in b["rows"]:
            if ours(r["label"]):
                groups.append((r, {}))
            elif groups:
                groups[-1][1][peer_name(r["label"])] = r
        for mine, theirs in groups:
            cells = []
            if suite:
                cells.append(mine["network"] if mine["network"] != previous or several else "")
                previous = mine["network"]
            cells.append(mine["config"])
            if medium:
                cells.append(products(mine["label"]))
            cells.append(spread(mine))
            for p in peers:
                t = theirs.get(p)
                if t is None:
                    cells += ["", ""]
                    continue
                text = f"{t['ratio']:.2f}x"  # as the run printed it, of the unrounded medians
                if p == peers[0]:
                    key = (mine["network"], mine["config"]) if suite else ("", mine["config"])
                    rounds = b["targets"].get(key)
                    text = f"**{text}**" if not medium else text
                    if rounds:
                        text += f" ({', '.join(rounds)})"
                cells += [spread(t), text]
            first = theirs.get(peers[0]) if peers else None
            if not medium:
                cells.append(f"{mine['pct']:.1f}%, {first['pct']:.1f}%" if first else f"{mine['pct']:.1f}%")
                cells.append(f"{number(mine['rss'])} MB, {number(first['rss'])} MB" if first
                             else f"{number(mine['rss'])} MB")
            if "test accuracy" in head[-2 if several else -1]:
                cells.append(f"{mine['acc']}, {first['acc']}" if first else f"{mine['acc']}")
            if several:
                load = b["info"].get("load")
                cells.append(f"{load[0]:.2f}, {load[1]:.2f}" if load else "")
            out.append("| " + " | ".join(cells) + " |")
    return [measured_compare(blocks), ""] + out


# ---------------------------------------------------------------------------------------------
# bench/kernels --benchmark_filter='^gemm'

GEMM = re.compile(r"^gemm/(?P<name>\w+?)_(?P<kind>sgemm|vdpbf16ps|amx)/(?P<threads>\d+)/\S*\s.*GFLOP=(?P<rate>[\d.]+)/s")


def render_gemms(lines, name):
    rates, order, runs, dates, cpus, yard, loads = {}, [], 0, [], set(), [], []
    for line in lines:
        m = GEMM.match(line)
        if m:
            key = m["name"]
            if key not in order:
                order.append(key)
            rates.setdefault((key, m["kind"], int(m["threads"])), []).append(float(m["rate"]))
        elif re.match(r"^\d{4}-\d\d-\d\dT", line):
            runs += 1
            dates.append(line[:10])
        elif line.startswith("nn::cpuInfo(): "):
            cpus.add(line[len("nn::cpuInfo(): "):])
        elif line.startswith("yardsticks: "):
            yard.append(line[len("yardsticks: "):])
        elif line.startswith("Load Average: "):
            loads += [float(x) for x in line[len("Load Average: "):].split(",")[:1]]
    kinds = [k for k in ("sgemm", "vdpbf16ps", "amx") if any(x[1] == k for x in rates)]

    def rate(key, kind, threads):
        values = rates.get((key, kind, threads))
        return median(values) if values else None

    label = {"sgemm": "sgemm", "vdpbf16ps": "vdpbf16ps", "amx": "AMX"}
    head = ["product (bench/kernels.cpp)"] + [f"{label[k]}, 1 thread" for k in kinds]
    last = kinds[-1]
    head += [f"{label[last]} / {label[k]}" for k in kinds[:-1]]
    head += [f"{label[k]}, 2 threads" for k in kinds]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in order:
        cells = [key]
        one = {k: rate(key, k, 1) for k in kinds}
        cells += [f"{one[k]:.0f}" if one[k] else "" for k in kinds]
        cells += [f"{one[last] / one[k]:.2f}x" if one[last] and one[k] else "" for k in kinds[:-1]]
        cells += [f"{rate(key, k, 2):.0f}" if rate(key, k, 2) else "" for k in kinds]
        out.append("| " + " | ".join(cells) + " |")
    day = sorted(set(dates))
    measured = "Measured on: " + "; ".join(
        ([" to ".join([day[0], day[-1]] if len(day) > 1 else day)] if day else []) + sorted(cpus)
        + [f"the first run's yardsticks: {y}" for y in yard[:1]]
        + ([f"load average {min(loads):.2f} to {max(loads):.2f}"] if loads else [])) + "."
    if runs > 1:
        measured += f" Each figure the median of {runs} runs."
    return [measured, ""] + out


# ---------------------------------------------------------------------------------------------
# tools/bench-data-parallel.sh

FIVE_HEADER = re.compile(r"^round\s+one\s+two\s+meeting\s+table\s+ranks")


def render_five_way(lines, name):
    cpu = setup = None
    loads, date, rows, medians, speedup, rounds_ratios = [], "", [], None, None, None
    for line in lines:
        if line.startswith("# measured "):
            date = line[len("# measured "):].strip()
        elif line.startswith("CPU: "):
            cpu = line[len("CPU: "):]
        elif line.startswith("LeNet, one epoch"):
            setup = line
        elif line.startswith(("load before:", "load after:")):
            m = re.search(r"load average: ([\d.]+)", line)
            if m:
                loads.append(m[1])
        elif re.match(r"^\s*\d+\s+\d", line):
            rows.append(line.split())
        elif line.startswith("medians of the rounds' ratios:"):
            rounds_ratios = dict(re.findall(r"(\S+/\S+) ([\d.]+)", line))
        elif line.startswith("median "):
            medians = line.split()
        elif line.startswith("speed-up of the table over one device:"):
            speedup = line.split(":", 1)[1].strip()
    if not rows or medians is None:
        raise Error(f"{name}: no rounds and medians of tools/bench-data-parallel.sh")
    head = ["round", "one", "two", "meeting", "table", "ranks", "table / meeting", "ranks / meeting",
            "meeting / two", "meeting's wait, ms a step"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def figure(text):
        return number(float(text)) if re.fullmatch(r"[\d.]+", text) else text

    for r in rows:
        out.append("| " + " | ".join([r[0]] + [figure(x) for x in r[1:6]] + r[6:10]) + " |")
    cells = ["**median**"] + [figure(x) for x in medians[1:6]]
    for ratio, key in zip(medians[6:9], ("table/meeting", "ranks/meeting", "meeting/two")):
        rounds = rounds_ratios.get(key) if rounds_ratios else None
        cells.append(f"**{ratio}**" + (f" (rounds {rounds})" if rounds else ""))
    cells.append(medians[9] if len(medians) > 9 else "")
    out.append("| " + " | ".join(cells) + " |")
    parts = [date] if date else []
    parts += [cpu] if cpu else []
    if setup:
        setup = re.sub(r"of (\d+) images a run \(0: all\)", lambda m: f"of {number(int(m[1]))} images a run"
                       if m[1] != "0" else "of all the images a run", setup)
        parts.append(setup)
    if loads:
        parts.append(f"load average {loads[0]} before, {loads[-1]} after")
    lines_out = ["Measured on: " + "; ".join(parts) + ".", ""] + out
    if speedup:
        lines_out += ["", f"Speed-up of the table over one device (the medians): {speedup}."]
    return lines_out


# ---------------------------------------------------------------------------------------------
# Transcriptions: `measured on:` lines and Markdown tables

def render_transcription(lines, name):
    out, seen = [], False
    for line in lines:
        if line.startswith("measured on: "):
            if out:
                out.append("")
            text = line[len("measured on: "):].strip()
            out += ["Measured on: " + text + ("" if text.endswith(".") else "."), ""]
            seen = True
        elif line.startswith("|"):
            if not seen:
                raise Error(f"{name}: a table before its 'measured on:' line")
            out.append(line.rstrip())
        elif line.strip():
            raise Error(f"{name}: a line neither a comment, a 'measured on:' line nor a table row: {line!r}")
    if not seen:
        raise Error(f"{name}: no figures found")
    return out


# ---------------------------------------------------------------------------------------------

def render(path):
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        every = f.read().splitlines()
    lines = [x for x in every if not x.startswith("#") or x.startswith("# measured ")]
    if any(FIVE_HEADER.match(x) for x in lines):
        return render_five_way(lines, name)
    blocks = parse_compares(lines, name)
    gemms = any(GEMM.match(x) for x in lines)
    if blocks or gemms:
        out = []
        if gemms:
            out += ["GEMMs, GFLOP/s (one multiply-add counts 2):", ""] + render_gemms(lines, name)
        if gemms and blocks:
            out += ["", "Training:", ""]
        if blocks:
            out += render_compare(blocks)
        return out
    return render_transcription([x for x in lines if not x.startswith("# measured ")], name)


def update(readme, results):
    text = readme.split("\n")
    out, i, used = [], 0, set()
    while i < len(text):
        line = text[i]
        out.append(line)
        m = MARKER.match(line)
        i += 1
        if not m:
            continue
        topic = m[1]
        end = f"<!-- end table:{topic} -->"
        try:
            j = text.index(end, i)
        except ValueError:
            raise Error(f"bench/README.md: <!-- table:{topic} --> has no {end}")
        path = os.path.join(results, topic + ".txt")
        if not os.path.exists(path):
            raise Error(f"bench/README.md: <!-- table:{topic} --> but no {os.path.relpath(path, ROOT)}")
        out += render(path) + [end]
        used.add(topic)
        i = j + 1
    missing = sorted(f[:-4] for f in os.listdir(results) if f.endswith(".txt") and f[:-4] not in used)
    if missing:
        raise Error("bench/README.md has no table for " + ", ".join(f"bench/results/{m}.txt" for m in missing)
                    + " (add <!-- table:NAME --> and <!-- end table:NAME --> where it belongs)")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if the README is stale; write nothing")
    p.add_argument("--readme", default=os.path.join(ROOT, "bench", "README.md"))
    p.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    a = p.parse_args()
    with open(a.readme, encoding="utf-8") as f:
        old = f.read()
    try:
        new = update(old, a.results)
    except Error as e:
        sys.exit(f"bench-tables: {e}")
    if new == old:
        return
    if a.check:
        sys.exit("bench-tables: bench/README.md's tables are not those of bench/results; run tools/bench-tables.py")
    with open(a.readme, "w", encoding="utf-8") as f:
        f.write(new)


if __name__ == "__main__":
    main()
