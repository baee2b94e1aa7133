module aigenora.local/gojson-vectors

go 1.25
