package edge

// BenchPage is benchPage, for the external benchmarks.
var BenchPage = benchPage
