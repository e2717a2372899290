# figures.awk turns the benchmark lines of bench/modelroute/run.sh's
# rounds ("round N" before each) into the table of each figure's median
# and its per-round values. gateway/door's TestModelRouteFigures runs it.
function median(name,   n, i, j, t, a) {
	n = cnt[name]
	for (i = 1; i <= n; i++) a[i] = v[name, i] + 0 # a number: sprintf made it a string, and strings sort as text
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(name, x) { v[name, ++cnt[name]] = x; list[name] = list[name] (cnt[name] > 1 ? ", " : "") x }
# A benchmark line: its name, then "N ns/op" and, for the stream, "MB/s".
function field(unit,   i) { for (i = 2; i < NF; i++) if ($(i + 1) == unit) return $i; return "" }
/^round / {
	if (r) flush()
	r = $2; delete f
}
/^BenchmarkModelRouteLongStream\// { split($1, p, "[/-]"); f["stream", p[2]] = field("MB/s") }
/^BenchmarkModelRouteFirstToken\// { split($1, p, "[/-]"); f["token", p[2]] = field("ns/op") }
/^BenchmarkToolCall\// { split($1, p, "[/-]"); f["call", p[2]] = field("ns/op") }
function flush() {
	if (f["stream", "direct"] && f["stream", "hops"] && f["stream", "route"]) {
		add("hops/direct", sprintf("%.2f", f["stream", "hops"] / f["stream", "direct"]))
		add("route/hops", sprintf("%.2f", f["stream", "route"] / f["stream", "hops"]))
		add("route/direct", sprintf("%.2f", f["stream", "route"] / f["stream", "direct"]))
		add("direct MB/s", f["stream", "direct"]); add("hops MB/s", f["stream", "hops"]); add("route MB/s", f["stream", "route"])
	}
	if (f["token", "direct"] && f["token", "route"])
		add("first token added (us)", sprintf("%.0f", (f["token", "route"] - f["token", "direct"]) / 1000))
	if (f["call", "socket"] && f["call", "door"])
		add("tool call door/socket", sprintf("%.2f", f["call", "door"] / f["call", "socket"]))
}
END {
	if (r) flush()
	n = split("hops/direct route/hops route/direct direct_MB/s hops_MB/s route_MB/s first_token_added_(us) tool_call_door/socket", names, " ")
	printf "| figure | median | rounds |\n|---|---|---|\n"
	for (i = 1; i <= n; i++) {
		name = names[i]; gsub("_", " ", name)
		if (cnt[name]) printf "| %s | " (name ~ /us/ ? "%.0f" : "%.2f") " | %s |\n", name, median(name), list[name]
	}
	print "targets: route/direct at least 0.8; first token at most 2000 us added; tool call at most 1.2"
}