package mariadb

// Unexported pieces that the external tests measure or check.
var (
	LoadData   = loadData
	InsertRows = insertRows
	SameValue  = sameValue
	ReadBack   = readBack
)
