package stack

// CurrentGCPercent is gcPercent, for the package's external tests.
var CurrentGCPercent = gcPercent
