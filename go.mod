module github.com/bootstrap-dev/bootstrap

go 1.26.8

require (
	github.com/beevik/ntp v1.4.3
	github.com/miekg/dns v1.1.73
	github.com/spf13/cobra v1.10.2
	golang.org/x/net v0.57.0
	golang.org/x/sys v0.47.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
