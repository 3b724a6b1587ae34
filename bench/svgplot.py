"""Dependency-free SVG charts for bench/run: grouped bars (cost per
operation), latency percentile curves (log scales, as in the seed reports)
and request rate over time."""

import math
import os

COLORS = {"weir": "#1f77b4", "weir-base": "#9467bd", "haproxy": "#d62728", "nginx": "#2ca02c", "direct": "#7f7f7f"}
W, H, L, R, T, B = 760, 420, 70, 150, 40, 60


def _svg(title, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">'
            f'<rect width="100%" height="100%" fill="white"/>'
            f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>{body}</svg>\n')


def _legend(names):
    out = []
    for i, n in enumerate(names):
        y = T + 10 + i * 18
        out.append(f'<rect x="{W - R + 15}" y="{y - 9}" width="12" height="12" fill="{COLORS.get(n, "#000")}"/>'
                   f'<text x="{W - R + 32}" y="{y + 1}">{n}</text>')
    return "".join(out)


def bars(title, ylabel, groups, series, values):
    """groups: x labels; series: names; values[(group, series)] -> float."""
    vmax = max([v for v in values.values() if v is not None] + [1e-9])
    pw, ph = W - L - R, H - T - B
    gw = pw / max(len(groups), 1)
    bw = gw * 0.8 / max(len(series), 1)
    out = [f'<line x1="{L}" y1="{T + ph}" x2="{L + pw}" y2="{T + ph}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{T + ph}" stroke="black"/>',
           f'<text x="16" y="{T + ph / 2}" transform="rotate(-90 16 {T + ph / 2})" text-anchor="middle">{ylabel}</text>']
    for k in range(5):
        v = vmax * k / 4
        y = T + ph - ph * k / 4
        out.append(f'<text x="{L - 6}" y="{y + 4}" text-anchor="end">{v:.3g}</text>'
                   f'<line x1="{L}" y1="{y}" x2="{L + pw}" y2="{y}" stroke="#ddd"/>')
    for gi, g in enumerate(groups):
        x0 = L + gi * gw + gw * 0.1
        out.append(f'<text x="{L + gi * gw + gw / 2}" y="{T + ph + 18}" text-anchor="middle">{g}</text>')
        for si, s in enumerate(series):
            v = values.get((g, s))
            if v is None:
                continue
            h = ph * v / vmax
            out.append(f'<rect x="{x0 + si * bw:.1f}" y="{T + ph - h:.1f}" width="{bw * 0.95:.1f}" height="{h:.1f}" '
                       f'fill="{COLORS.get(s, "#000")}"><title>{s} {g}: {v:.4g}</title></rect>')
    return _svg(title, "".join(out) + _legend(series))


def lines(title, xlabel, ylabel, series, xlog=False, ylog=False, xticks=None):
    """series: {name: [(x, y), ...]}."""
    pts = [p for s in series.values() for p in s if p[1] > 0]
    if not pts:
        return _svg(title, '<text x="50%" y="50%">no data</text>')
    fx = (lambda x: math.log10(x)) if xlog else (lambda x: x)
    fy = (lambda y: math.log10(y)) if ylog else (lambda y: y)
    xs, ys = [fx(p[0]) for p in pts], [fy(p[1]) for p in pts]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0 = min(ys) if ylog else 0
    y1 = max(ys) if max(ys) > y0 else y0 + 1
    pw, ph = W - L - R, H - T - B
    sx = lambda x: L + pw * (fx(x) - x0) / (x1 - x0)  # noqa: E731
    sy = lambda y: T + ph - ph * (fy(y) - y0) / (y1 - y0)  # noqa: E731
    out = [f'<line x1="{L}" y1="{T + ph}" x2="{L + pw}" y2="{T + ph}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{T + ph}" stroke="black"/>',
           f'<text x="{L + pw / 2}" y="{H - 15}" text-anchor="middle">{xlabel}</text>',
           f'<text x="16" y="{T + ph / 2}" transform="rotate(-90 16 {T + ph / 2})" text-anchor="middle">{ylabel}</text>']
    for k in range(5):
        yv = y0 + (y1 - y0) * k / 4
        label = 10 ** yv if ylog else yv
        y = T + ph - ph * k / 4
        out.append(f'<text x="{L - 6}" y="{y + 4}" text-anchor="end">{label:.3g}</text>'
                   f'<line x1="{L}" y1="{y}" x2="{L + pw}" y2="{y}" stroke="#ddd"/>')
    for xv, lab in (xticks or []):
        out.append(f'<text x="{sx(xv):.1f}" y="{T + ph + 16}" text-anchor="middle">{lab}</text>')
    for name, s in series.items():
        s = [p for p in s if p[1] > 0]
        if not s:
            continue
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(s))
        out.append(f'<path d="{d}" fill="none" stroke="{COLORS.get(name, "#000")}" stroke-width="2"/>')
    return _svg(title, "".join(out) + _legend(list(series)))


def write_all(results, proxies, out):
    def save(name, svg):
        with open(os.path.join(out, name), "w") as f:
            f.write(svg)

    def mean(sc, p, key):
        xs = [r[key] for r in results if r.get("scenario") == sc and r.get("proxy") == p and key in r]
        return sum(xs) / len(xs) if xs else None

    http = [s for s in ["S1-empty", "S1-1byte", "S2-close"] if any(r.get("scenario") == s for r in results)]
    if http:
        save("cost-http.svg", bars("Proxy CPU per request (lower is better)", "µs per request", http, proxies,
                                   {(s, p): mean(s, p, "us_per_req") for s in http for p in proxies}))
    s3 = sorted({r["scenario"] for r in results if r["scenario"].startswith("S3")})
    if s3:
        labels = {s: s.replace("S3-tcp-", "").replace("-splice-", " splice ") for s in s3}
        save("cost-tcp.svg", bars("mode tcp: proxy CPU per GB (lower is better)", "CPU s per GB",
                                  [labels[s] for s in s3], ["weir", "haproxy"],
                                  {(labels[s], p): mean(s, p, "cpu_s_per_gb") for s in s3 for p in ["weir", "haproxy"]}))
    s4 = [s for s in ["S4-full-ecdsa", "S4-resumed-ecdsa", "S4-keepalive-ecdsa", "S4-full-rsa", "S4-resumed-rsa"]
          if any(r.get("scenario") == s for r in results)]
    if s4:
        tls_px = [p for p in proxies if p != "nginx"]
        save("cost-tls.svg", bars("TLS 1.3: proxy CPU per operation (lower is better)", "µs per operation",
                                  [s[3:] for s in s4], tls_px,
                                  {(s[3:], p): mean(s, p, "us_per_req") for s in s4 for p in tls_px}))
    # One bar group per S5 series and count ("idle-1000", "tls-slope-8000").
    s5 = sorted({r["scenario"] for r in results if r["scenario"].startswith("S5")},
                key=lambda s: (s.rsplit("-", 1)[0].replace("-slope", ""), "slope" in s, int(s.rsplit("-", 1)[1])))
    if s5:
        save("memory-idle.svg", bars("Proxy RSS per idle connection (lower is better)", "bytes per connection",
                                     [s[3:] for s in s5], proxies,
                                     {(s[3:], p): mean(s, p, "bytes_per_conn") for s in s5 for p in proxies}))
    s6 = [r for r in results if r.get("scenario") == "S6-latency"]
    if s6:
        pct = [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999]
        series = {}
        for r in s6:
            series[r["proxy"]] = [(1 / (1 - p / 100), r["latency_us"][f"{p:g}"]) for p in pct]
        ticks = [(1 / (1 - p / 100), f"{p:g}") for p in pct]
        save("latency.svg", lines("Latency at a fixed rate (percentile curves)", "percentile", "µs", series,
                                  xlog=True, ylog=True, xticks=ticks))
    timelines = {}
    for r in results:
        if r.get("scenario") == "S1-1byte" and r.get("round") == 0 and r.get("timeline"):
            timelines[r["proxy"]] = [(i + 1, v) for i, v in enumerate(r["timeline"])]
    if timelines:
        save("rate.svg", lines("S1 keep-alive, 1-byte bodies: rate over time", "second", "requests/s", timelines))
