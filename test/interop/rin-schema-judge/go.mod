module aigenora.local/rin-schema-judge

go 1.25.0

require github.com/sunrioa/rin v0.0.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	golang.org/x/text v0.39.0 // indirect
)

// The reference source, read in place (../shared beside the repository); never copied.
replace github.com/sunrioa/rin => ../../../../shared/reference/rin-src
