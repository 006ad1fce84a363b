package decode

// Exported for the black-box tests in package ingest_test.
var (
	WriteTestdata = writeTestdata
	GoldenNow     = goldenNow
)
