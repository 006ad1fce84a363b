module github.com/incidex/incidex/bench/acscan

go 1.26.8

replace github.com/incidex/incidex => ../..

require (
	github.com/cloudflare/ahocorasick v0.0.0-20240916140611-054963ec9396
	github.com/incidex/incidex v0.0.0-00010101000000-000000000000
	github.com/petar-dambovaliev/aho-corasick v0.0.0-20250424160509-463d218d4745
)
