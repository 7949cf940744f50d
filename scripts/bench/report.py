#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a scripts/bench.sh run directory into summary.md and PNG plots.

    report.py DIR [DIR...] [--publish Documentation/benchmarks.md]

Reads DIR/runs.csv (every raw run) and DIR/meta.txt. Writes DIR/summary.md,
DIR/goodput_vs_loss.png, DIR/conditions.png (and DIR/sweep.png when the
size sweep ran), plus the gnuplot inputs (DIR/plot/). With --publish, the
part of the given Markdown file between the "bench:begin" and "bench:end"
markers is replaced by the summary (with ASCII versions of the plots).
Several DIRs (sittings of one session: e.g. every test on the clean link,
write_bw under every condition, an MTU 9000 run) each get their summary;
published, they follow one targets table that takes each target from the
first sitting that measured both of its operands.

Statistics: per condition x contender x test, the median and min-max of the
successful runs; failed runs (empty value) are counted, never averaged in.
Ratios are between medians of the same run directory only.
"""
import csv
import os
import shutil
import re
import statistics
import subprocess
import sys

CONDITIONS = [
    ("clean", "none"),
    ("loss0.1", "loss 0.1%"),
    ("loss1", "loss 1%"),
    ("loss5", "loss 5%"),
    ("loss10", "loss 10%"),
    ("gemodel", "loss gemodel 1% 10% 70% 0.1% (bursty)"),
    ("delay2", "delay 2ms (the reorder conditions' delay, no reordering)"),
    ("reorder10", "delay 2ms reorder 10%"),
    ("reorder25", "delay 2ms reorder 25%"),
    ("dup1", "duplicate 1%"),
    ("blackhole", "none; 1 metaroce path (UDP sport) dropped mid-run"),
]
COND_DESC = dict(CONDITIONS)
COND_ORDER = [c for c, _ in CONDITIONS]
LOSS_X = [("clean", 0.0), ("loss0.1", 0.1), ("loss1", 1.0), ("loss5", 5.0),
          ("loss10", 10.0)]
BAR_CONDS = ["clean", "gemodel", "reorder10", "reorder25", "dup1",
             "blackhole"]
CONTENDERS = ["metaroce", "rxe", "tcp"]
# the headline "goodput" test of each contender
GOODPUT = {"metaroce": "write_bw", "rxe": "write_bw", "tcp": "tcp_stream"}


def load(d):
    rows = []
    with open(os.path.join(d, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
    meta = {}
    try:
        with open(os.path.join(d, "meta.txt")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    meta[k] = v
    except OSError:
        pass
    return rows, meta


def num(x):
    """About 3 significant digits, no exponent."""
    a = abs(x)
    if a >= 100:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3f" % x


class Cell:
    """Runs of one condition x contender x test."""

    def __init__(self):
        self.vals = []
        self.cpu_per_gib = []
        self.total = 0
        self.notes = []

    def add(self, r):
        self.total += 1
        v = r.get("value", "")
        if v not in ("", None):
            self.vals.append(float(v))
            try:
                b = float(r.get("bytes") or 0)
                c = float(r.get("cpu_s") or "nan")
                if b > 0 and c == c:
                    self.cpu_per_gib.append(c / (b / 2**30))
            except ValueError:
                pass
        elif r.get("note"):
            self.notes.append(r["note"])

    @property
    def med(self):
        return statistics.median(self.vals) if self.vals else None

    def fmt(self, digits=1):
        if not self.total:
            return "n/a"
        if not self.vals:
            return "failed (0/%d)" % self.total
        s = "%s [%s-%s]" % (num(self.med), num(min(self.vals)),
                            num(max(self.vals)))
        if len(self.vals) < self.total:
            s += " (%d/%d ok)" % (len(self.vals), self.total)
        return s


def cells(rows):
    t = {}
    for r in rows:
        k = (r["condition"], r["contender"], r["test"])
        t.setdefault(k, Cell()).add(r)
    return t


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2fx" % (a / b)


def med(t, cond, who, test):
    c = t.get((cond, who, test))
    return c.med if c else None


def conds_in(rows):
    seen = {r["condition"] for r in rows}
    return [c for c in COND_ORDER if c in seen] + sorted(seen - set(COND_ORDER))


def table(header, lines):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(x) for x in l) + " |" for l in lines]
    return out


def goodput_table(t, conds):
    hdr = ["condition", "metaroce", "rxe", "TCP", "metaroce / own clean",
           "rxe / own clean", "TCP / own clean", "metaroce / rxe",
           "metaroce / TCP"]
    lines = []
    for c in conds:
        m = {w: med(t, c, w, GOODPUT[w]) for w in CONTENDERS}
        clean = {w: med(t, "clean", w, GOODPUT[w]) for w in CONTENDERS}
        lines.append([c] + [t.get((c, w, GOODPUT[w]), Cell()).fmt()
                            for w in CONTENDERS] +
                     [ratio(m[w], clean[w]) for w in CONTENDERS] +
                     [ratio(m["metaroce"], m["rxe"]),
                      ratio(m["metaroce"], m["tcp"])])
    return table(hdr, lines)


def rdma_table(t, conds, test, digits=1, lower_better=False):
    hdr = ["condition", "metaroce", "rxe", "metaroce / own clean",
           "rxe / own clean", "metaroce / rxe"]
    lines = []
    for c in conds:
        if (c, "metaroce", test) not in t and (c, "rxe", test) not in t:
            continue
        m = {w: med(t, c, w, test) for w in ("metaroce", "rxe")}
        cl = {w: med(t, "clean", w, test) for w in ("metaroce", "rxe")}
        lines.append([c] + [t.get((c, w, test), Cell()).fmt(digits)
                            for w in ("metaroce", "rxe")] +
                     [ratio(m[w], cl[w]) for w in ("metaroce", "rxe")] +
                     [ratio(m["metaroce"], m["rxe"])])
    return table(hdr, lines) if lines else []


def cpu_table(t, conds):
    hdr = ["condition"] + ["%s (%s)" % (w, GOODPUT[w]) for w in CONTENDERS]
    lines = []
    for c in conds:
        row = [c]
        for w in CONTENDERS:
            cell = t.get((c, w, GOODPUT[w]))
            if cell and cell.cpu_per_gib:
                row.append("%.1f" % statistics.median(cell.cpu_per_gib))
            else:
                row.append("-")
        if any(x != "-" for x in row[1:]):
            lines.append(row)
    return table(hdr, lines) if lines else []


def sweep_sizes(t):
    sizes = set()
    for (c, w, test) in t:
        m = re.fullmatch(r"write_bw_(\d+)", test)
        if m and c == "clean":
            sizes.add(int(m.group(1)))
    return sorted(sizes)


def target_checks(t):
    """[(name, ratio or None, threshold, lower_is_better)] of T's medians."""
    def r(a, b):
        return a / b if a is not None and b else None

    m = lambda c, w="metaroce", test="write_bw": med(t, c, w, test)
    checks = [
        ("clean write_bw >= 2x rxe", r(m("clean"), m("clean", "rxe")), 2.0,
         False),
        ("clean write_bw >= 0.9x TCP",
         r(m("clean"), m("clean", "tcp", "tcp_stream")), 0.9, False),
        ("1% loss >= 0.9x own clean", r(m("loss1"), m("clean")), 0.9, False),
        ("10% loss >= 0.5x own clean", r(m("loss10"), m("clean")), 0.5,
         False),
        ("reorder 10% >= 0.95x own clean", r(m("reorder10"), m("clean")),
         0.95, False),
        ("reorder 25% >= 0.95x own clean", r(m("reorder25"), m("clean")),
         0.95, False),
        # the reorder conditions add netem's 2 ms delay on both nodes:
        # against the same delay without reordering, what reordering costs
        ("reorder 10% >= 0.95x own delay 2ms (same delay)",
         r(m("reorder10"), m("delay2")), 0.95, False),
        ("reorder 25% >= 0.95x own delay 2ms (same delay)",
         r(m("reorder25"), m("delay2")), 0.95, False),
        ("1 of 4 paths blackholed >= 0.7x own clean",
         r(m("blackhole"), m("clean")), 0.7, False),
        ("write_lat 2 B median <= rxe's",
         r(m("clean", test="write_lat_2"), m("clean", "rxe", "write_lat_2")),
         1.0, True),
    ]
    for test in ("write_lat_4096", "send_lat_2", "send_lat_4096",
                 "read_lat_2", "read_lat_4096"):
        checks.append(("%s median <= rxe's" % test,
                       r(m("clean", test=test), m("clean", "rxe", test)),
                       1.0, True))
    for test in ("write_rate_64", "send_rate_64"):
        checks.append(("%s message rate >= 1.5x rxe" % test,
                       r(m("clean", test=test), m("clean", "rxe", test)),
                       1.5, False))
    checks.append(("8 QPs (-q 8) >= 1 QP", r(m("clean", test="write_bw_q8"),
                                              m("clean")), 1.0, False))
    return checks


def verdict(val, thr, le):
    if val is None:
        return ["no data", "-"]
    ok = val <= thr if le else val >= thr
    return ["%.2fx" % val, "met" if ok else "not met"]


def targets(t):
    return table(["target (reported, not asserted)", "measured",
                  "status"], [[name] + verdict(val, thr, le)
                              for name, val, thr, le in target_checks(t)])


def combined_targets(sittings):
    """Targets over several sittings (SITTINGS: [(name, t, meta)]): each
    target from the first sitting that measured both of its operands (a
    ratio never divides numbers of two sittings), plus MTU 9000 against
    MTU 1500, which needs two sittings by nature (the MTU is one per
    run) and says so."""
    per = [(n, {c[0]: c for c in target_checks(t)})
           for n, t, meta in sittings if meta.get("mtu", "1500") == "1500"]
    lines = []
    for name, _, _, _ in target_checks({}):
        for n, checks in per:
            _, val, thr, le = checks[name]
            if val is not None:
                lines.append([name] + verdict(val, thr, le) + [n])
                break
        else:
            lines.append([name, "no data", "-", "-"])
    jumbo = [(n, med(t, "clean", "metaroce", "write_bw"))
             for n, t, meta in sittings if meta.get("mtu") == "9000"]
    std = [(n, med(t, "clean", "metaroce", "write_bw"))
           for n, t, meta in sittings if meta.get("mtu", "1500") == "1500"]
    jumbo = [(n, v) for n, v in jumbo if v is not None]
    std = [(n, v) for n, v in std if v is not None]
    if jumbo and std:
        lines.append(["MTU 9000 write_bw >= 1.3x MTU 1500"] +
                     verdict(jumbo[0][1] / std[0][1], 1.3, False) +
                     ["%s / %s (two sittings)" % (jumbo[0][0], std[0][0])])
    return table(["target (reported, not asserted)", "measured", "status",
                  "sitting"], lines)


def gnuplot(script, cwd, name):
    """Write cwd/NAME.gp and run it; returns its stdout (dumb terminal)."""
    with open(os.path.join(cwd, name + ".gp"), "w") as f:
        f.write(script)
    try:
        p = subprocess.run(["gnuplot", name + ".gp"], cwd=cwd,
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "gnuplot: %s" % e
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode:
        sys.stderr.write("gnuplot %s.gp: %s" % (name, err))
        return "gnuplot: " + err
    return out


def val_or_nan(x):
    return "%.3f" % x if x is not None else "NaN"


def plots(d, t, conds, ascii_out):
    pd = os.path.join(d, "plot")
    os.makedirs(pd, exist_ok=True)
    made = []
    colors = {"metaroce": "#d62728", "rxe": "#1f77b4", "tcp": "#2ca02c"}
    labels = {"metaroce": "metaroce (ib\\_write\\_bw)",
              "rxe": "rxe (ib\\_write\\_bw)", "tcp": "TCP (iperf3)"}
    # 1. goodput vs loss rate: x is the loss rate, categorical spacing
    loss = [(c, x) for c, x in LOSS_X if c in conds]
    if loss:
        with open(os.path.join(pd, "loss.dat"), "w") as f:
            f.write("# idx label " + " ".join(
                "%s_med %s_min %s_max" % (w, w, w) for w in CONTENDERS) + "\n")
            for i, (c, x) in enumerate(loss):
                row = [str(i), '"%s%%"' % ("0" if x == 0 else "%g" % x)]
                for w in CONTENDERS:
                    cell = t.get((c, w, GOODPUT[w]))
                    v = cell.vals if cell else []
                    row += [val_or_nan(statistics.median(v) if v else None),
                            val_or_nan(min(v) if v else None),
                            val_or_nan(max(v) if v else None)]
                f.write(" ".join(row) + "\n")
        for term, name in (("pngcairo size 900,560 font 'sans,11'",
                            "goodput_vs_loss.png"),
                           ("dumb size 78,24", None)):
            s = ["set terminal " + term]
            if name:
                s.append("set output '%s'" % os.path.join(d, name))
            s += ["set title 'Goodput vs random loss (netem on both eth0)'",
                  "set xlabel 'packet loss rate per direction'",
                  "set ylabel 'MiB/s (median, bars: min-max)'",
                  "set key top right", "set grid ytics", "set yrange [0:*]",
                  "set xrange [-0.3:%f]" % (len(loss) - 0.7)]
            plot = []
            for k, w in enumerate(CONTENDERS):
                col = 3 + 3 * k
                if name:
                    plot.append(
                        "'loss.dat' u 1:%d:%d:%d:xtic(2) w yerrorlines lw 2 "
                        "pt 7 lc rgb '%s' t '%s'" % (col, col + 1, col + 2,
                                                     colors[w], labels[w]))
                else:
                    plot.append("'loss.dat' u 1:%d:xtic(2) w lp t '%s'" %
                                (col, w))
            if not name:
                s.append("unset grid")
            s.append("plot " + ", ".join(plot))
            o = gnuplot("\n".join(s) + "\n", pd,
                        "loss" if name else "loss-ascii")
            if name:
                made.append(name)
            else:
                ascii_out["loss"] = o
    # 2. bars: goodput under the non-loss impairments; left absolute,
    # right as a fraction of the contender's own clean goodput
    bars = [c for c in BAR_CONDS if c in conds]
    if bars:
        def rel(c, w):
            v, cl = med(t, c, w, GOODPUT[w]), med(t, "clean", w, GOODPUT[w])
            return v / cl if v is not None and cl else None

        with open(os.path.join(pd, "bars.dat"), "w") as f:
            f.write("# cond " + " ".join(CONTENDERS) + " " + " ".join(
                w + "/clean" for w in CONTENDERS) + "\n")
            for c in bars:
                f.write('"%s" ' % c + " ".join(
                    val_or_nan(med(t, c, w, GOODPUT[w]))
                    for w in CONTENDERS) + " " + " ".join(
                    val_or_nan(rel(c, w)) for w in CONTENDERS) + "\n")

        def plot_cmd(off, has):
            # a contender without any number keeps its place (and colour)
            # with empty bars: gnuplot refuses all-NaN columns
            return "plot " + ", ".join(
                ("'bars.dat' u %d:xtic(1) t '%s' lc rgb '%s'" %
                 (k + 2 + off, labels[w], colors[w]))
                if any(has(c, w) is not None for c in bars)
                else ("'bars.dat' u (0):xtic(1) t '%s (no data)' "
                      "lc rgb '%s'" % (labels[w], colors[w]))
                for k, w in enumerate(CONTENDERS))

        s = ["set terminal pngcairo size 1400,560 font 'sans,11'",
             "set output '%s'" % os.path.join(d, "conditions.png"),
             "set multiplot layout 1,2 title 'Goodput under bursty loss, "
             "reordering, duplication and a blackholed path (median; "
             "missing bar = failed, or n/a: the blackhole is "
             "metaroce-only)' font ',12'",
             "set style data histograms",
             "set style histogram clustered gap 1",
             "set style fill solid 0.85 border -1", "set boxwidth 0.9",
             "set grid ytics", "set yrange [0:*]", "set key top right",
             "set xtics nomirror",
             "set title 'absolute'", "set ylabel 'MiB/s'",
             plot_cmd(0, lambda c, w: med(t, c, w, GOODPUT[w])),
             "set title 'relative to its own clean goodput'",
             "set ylabel 'fraction of own clean'",
             "set yrange [0:*]",
             plot_cmd(len(CONTENDERS), rel),
             "unset multiplot"]
        gnuplot("\n".join(s) + "\n", pd, "conditions")
        made.append("conditions.png")
    # 3. size sweep (clean)
    sizes = sweep_sizes(t)
    if sizes:
        with open(os.path.join(pd, "sweep.dat"), "w") as f:
            for sz in sizes:
                f.write("%d %s %s\n" % (sz, val_or_nan(
                    med(t, "clean", "metaroce", "write_bw_%d" % sz)),
                    val_or_nan(med(t, "clean", "rxe", "write_bw_%d" % sz))))
        s = ["set terminal pngcairo size 900,560 font 'sans,11'",
             "set output '%s'" % os.path.join(d, "sweep.png"),
             "set title 'ib\\_write\\_bw size sweep, clean link (median)'",
             "set logscale x 2", "set format x '2^{%L}'",
             "set xlabel 'message size (bytes)'", "set ylabel 'MiB/s'",
             "set grid", "set key top left",
             "plot 'sweep.dat' u 1:2 w lp lw 2 pt 7 lc rgb '%s' t 'metaroce',"
             " '' u 1:3 w lp lw 2 pt 7 lc rgb '%s' t 'rxe'" %
             (colors["metaroce"], colors["rxe"])]
        gnuplot("\n".join(s) + "\n", pd, "sweep")
        made.append("sweep.png")
    return [m for m in made if os.path.exists(os.path.join(d, m))]


def summary(d, rows, meta, ascii_out):
    t = cells(rows)
    conds = conds_in(rows)
    L = ["# metaroce benchmark: %s" % os.path.basename(os.path.abspath(d)),
         "",
         "- date: %s" % meta.get("date", "?"),
         "- command: `%s`" % meta.get("command", "?"),
         "- host: %s; CPU: %s" % (meta.get("host", "?"), meta.get("cpu", "?")),
         "- guests: two qemu TCG nodes (-smp 1), kernel %s; link: %s, "
         "eth0 MTU %s" % (meta.get("guest_n1", "?").split(" ")[0],
                          meta.get("link", "qemu socket netdev (tcp)"),
                          meta.get("mtu", "1500")),
         "- reps: %s per contender and condition, alternated "
         "(metaroce, rxe, tcp, metaroce, ...); bandwidth runs %s s; "
         "latency runs %s iterations" % (meta.get("reps", "?"),
                                         meta.get("duration", "?"),
                                         meta.get("lat_iters", "?")),
         "- perftest %s, iperf3 %s" % (meta.get("perftest", "?"),
                                       meta.get("iperf3", "?")),
         "",
         "Cells: median [min-max] of the successful runs; `(k/n ok)` when "
         "some runs failed or timed out, `failed (0/n)` when all did. "
         "Ratios divide medians of this run only. netem is applied to the "
         "eth0 egress of both nodes.",
         "",
         "## Conditions", ""]
    L += table(["condition", "netem / action"],
               [[c, COND_DESC.get(c, "?")] for c in conds])
    L += ["", "## Goodput: ib_write_bw 64 KiB (RDMA) vs iperf3 single "
          "stream (TCP), MiB/s", ""]
    L += goodput_table(t, conds)
    for test, title, digits in (
            ("read_bw", "ib_read_bw 64 KiB, MiB/s", 1),
            ("send_bw", "ib_send_bw 64 KiB, MiB/s", 1),
            ("write_lat_2", "ib_write_lat 2 B, t_typical (median) usec", 0),
            ("write_lat_4096", "ib_write_lat 4 KiB, t_typical (median) usec",
             0),
            ("write_bw_q8", "ib_write_bw 64 KiB, 8 QPs (-q 8), MiB/s", 1),
            ("write_rate_64", "ib_write_bw 64 B, message rate, Mpps", 3),
            ("send_rate_64", "ib_send_bw 64 B, message rate, Mpps", 3),
            ("send_lat_2", "ib_send_lat 2 B, t_typical (median) usec", 0),
            ("send_lat_4096", "ib_send_lat 4 KiB, t_typical (median) usec",
             0),
            ("read_lat_2", "ib_read_lat 2 B, t_typical (median) usec", 0),
            ("read_lat_4096", "ib_read_lat 4 KiB, t_typical (median) usec",
             0)):
        tb = rdma_table(t, conds, test, digits)
        if tb:
            L += ["", "## " + title, ""] + tb
    sizes = sweep_sizes(t)
    if sizes:
        L += ["", "## ib_write_bw size sweep (-a), clean, MiB/s", ""]
        L += table(["bytes", "metaroce", "rxe", "metaroce / rxe"], [
            [sz] + [t.get(("clean", w, "write_bw_%d" % sz), Cell()).fmt()
                    for w in ("metaroce", "rxe")] +
            [ratio(med(t, "clean", "metaroce", "write_bw_%d" % sz),
                   med(t, "clean", "rxe", "write_bw_%d" % sz))]
            for sz in sizes])
    tb = cpu_table(t, conds)
    if tb:
        L += ["", "## CPU cost: guest CPU-seconds per GiB moved (both "
              "nodes, user+nice+system+irq+softirq, median)", ""] + tb
    L += ["", "## Targets", ""] + targets(t)
    fails = [r for r in rows if r.get("value", "") == ""]
    if fails:
        L += ["", "## Failed runs", ""]
        L += table(["condition", "contender", "test", "rep", "rc", "note"],
                   [[r["condition"], r["contender"], r["test"], r["rep"],
                     r["rc"] or "-", r.get("note") or "-"] for r in fails])
    bh = [r for r in rows if r["condition"] == "blackhole" and r.get("note")]
    if bh:
        L += ["", "Blackhole actions: " + "; ".join(sorted(
            {r["note"] for r in bh}))]
    return L, t, conds


def publish(path, body, d, ascii_out, made=()):
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    gen = [begin, "",
           "<!-- generated by scripts/bench.sh --publish; edit outside "
           "the markers -->", ""]
    gen += ["##" + l if l.startswith("#") else l for l in body]
    # The plots go next to the document (Documentation/benchmarks/), so
    # the published page shows them; build/ is not committed.
    imgdir = os.path.join(os.path.dirname(os.path.abspath(path)),
                          "benchmarks")
    shown = []
    for m in made:
        try:
            os.makedirs(imgdir, exist_ok=True)
            shutil.copyfile(os.path.join(d, m), os.path.join(imgdir, m))
            shown.append(m)
        except OSError:
            pass
    if shown:
        gen += ["", "#### Plots", ""]
        gen += ["![%s](benchmarks/%s)" % (m, m) for m in shown]
    if ascii_out.get("loss", "").strip() and \
            not ascii_out["loss"].startswith("gnuplot:"):
        gen += ["", "#### Goodput vs loss (text copy of goodput_vs_loss.png)", "", "```"]
        gen += [l.rstrip() for l in ascii_out["loss"].splitlines()
                if l.strip()]
        gen += ["```"]
    gen += ["", end]
    try:
        old = open(path).read()
    except OSError:
        old = "# metaroce benchmarks\n\n%s\n%s\n" % (begin, end)
    if begin in old and end in old:
        new = old[:old.index(begin)] + "\n".join(gen) + \
            old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + "\n".join(gen) + "\n"
    with open(path, "w") as f:
        f.write(new)


def report_one(d):
    rows, meta = load(d)
    ascii_out = {}
    body, t, conds = summary(d, rows, meta, ascii_out)
    made = plots(d, t, conds, ascii_out)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(body) + "\n")
        if made:
            f.write("\n## Plots\n\n" + "\n".join(
                "![%s](%s)" % (m, m) for m in made) + "\n")
    print("# bench: %s (%d runs, %d failed)" % (
        os.path.join(d, "summary.md"), len(rows),
        sum(1 for r in rows if r.get("value", "") == "")))
    for m in made:
        print("# bench: plot %s" % os.path.join(d, m))
    return body, t, meta, ascii_out, made


def without_targets(body):
    """BODY without its "## Targets" section (the combined table has them)."""
    out, skip = [], False
    for line in body:
        if line.startswith("## "):
            skip = line == "## Targets"
        if not skip:
            out.append(line)
    return out


def main():
    args = sys.argv[1:]
    pub = None
    if "--publish" in args:
        i = args.index("--publish")
        pub = args[i + 1]
        del args[i:i + 2]
    dirs = [os.path.abspath(a) for a in args if not a.startswith("-")]
    if not dirs or len(dirs) != len(args):
        print(__doc__)
        return 2
    reps = [(d,) + report_one(d) for d in dirs]
    if not pub:
        return 0
    if len(reps) == 1:
        d, body, _, _, ascii_out, made = reps[0]
        publish(pub, body, d, ascii_out, made)
    else:
        names = [os.path.basename(d) for d in dirs]
        body = ["# metaroce benchmark: sittings %s" % ", ".join(names), "",
                "Several sittings of one session, each below with its own "
                "command line; every ratio divides medians of one sitting "
                "(the sitting column says which), except MTU 9000 against "
                "MTU 1500, which takes one number from each of two.", "",
                "## Targets", ""]
        body += combined_targets([(os.path.basename(d), t, meta)
                                  for d, _, t, meta, _, _ in reps])
        for d, b, _, _, _, _ in reps:
            body += [""] + ["#" + l if l.startswith("#") else l
                            for l in without_targets(b)]
        # the plots (and their text copy) of the sitting with the most
        # conditions (the loss plot of a clean-only sitting is one point)
        pd, _, _, _, ascii_out, made = max(
            reps, key=lambda r: len({k[0] for k in r[2]}))
        publish(pub, body, pd, ascii_out, made)
    print("# bench: published into %s" % pub)
    return 0


if __name__ == "__main__":
    sys.exit(main())
