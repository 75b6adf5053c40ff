module github.com/scry-pm/scry

go 1.26.8

require (
	github.com/owenrumney/go-sarif/v2 v2.3.3
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
