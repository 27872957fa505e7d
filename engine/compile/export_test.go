package compile

// ShareLeaves is shareLeaves, for the benchmarks of package compile_test.
var ShareLeaves = shareLeaves
