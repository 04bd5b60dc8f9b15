# bootstrap — make targets. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/bootstrap
PKGS := ./...
export GOFLAGS := -buildvcs=false
# Without cgo: bin/bootstrap is one static file that runs on any Linux jump host (nothing here
# needs C: the resolver and os/user have pure-Go fallbacks), and the tool builds under
# /var/cache/bootstrap use the same flag, so the packages they share with the project (the
# standard library, k8s.io/* for kube-apiserver) are compiled once (scripts/lib.sh shared_caches).
export CGO_ENABLED := 0
# -s -w: no symbol table or DWARF (a third smaller); the version, commit and commit time are stamped
# from Git by scripts/version.sh (`bootstrap version`, `--version`, the journal and the report).
LDFLAGS := -s -w $(shell scripts/version.sh)
# Test binaries are linked without symbol table or DWARF: a quarter less link CPU (measured on
# cmd/bootstrap's: 9.0 -> 6.7 CPU-seconds), and a failing test's stack trace still names files and lines.
TESTLDFLAGS := -s -w
# Each long step prints a line when it starts, one every 30 s with the elapsed time, one when it ends.
PHASE := scripts/phase.sh

.PHONY: help build test testbin opm argocd e2e demo demo-upgrade lab bench lint deps clean installercheck fuzz

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/bootstrap (version stamped from Git)
	@$(PHASE) "go build $(BIN)" $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/bootstrap

deps: ## install the system packages the tests and the lab use (Debian; idempotent)
	scripts/install-deps.sh

test: deps testbin opm argocd ## unit and integration tests against real local peers (under 10 minutes warm)
	@$(PHASE) "go vet" $(GO) vet $(PKGS)
	@OPM=$$(scripts/opm.sh) $(PHASE) "go test $(PKGS)" $(GO) test -count=1 -ldflags '$(TESTLDFLAGS)' -timeout 15m $(PKGS)
	scripts/installercheck.sh

opm: ## build the real opm the catalog test serves our filtered catalogs with (cached under /var/cache/bootstrap/opm; ~3 min once)
	scripts/opm.sh >/dev/null

testbin: ## build kube-apiserver and etcd, fetch the CRDs (cached under /var/cache/bootstrap/testbin)
	scripts/testbin.sh >/dev/null
argocd: ## build Argo CD's controllers and kustomize, which the handoff tests and the lab run (cached under /var/cache/bootstrap/argocd; cold ~5 min on 2 quiet cores, much more under load)
	scripts/argocd.sh >/dev/null
installercheck: ## the generated configs against the OpenShift installer's own types and validation (separate module; test binary cached in /var/cache/bootstrap/installercheck, cold build ~15 min on 2 cores, 0.2 s warm)
	scripts/installercheck.sh

e2e: deps build testbin argocd ## whole-pipeline tests driving the built binary in the local lab
	@BOOTSTRAP_BIN=$(abspath $(BIN)) $(PHASE) "go test -tags e2e ./e2e" $(GO) test -count=1 -ldflags '$(TESTLDFLAGS)' -tags e2e -timeout 60m ./e2e/

demo: deps build testbin argocd bin/lab ## the whole pipeline against the embedded lab on loopback
	bin/lab demo --bin $(abspath $(BIN))

demo-upgrade: deps build testbin ## a two-minor upgrade planned from the lab's releases and update service, its delta mirrored, run canary first (etcd backups over SSH) on the simulated cluster, then the report
	@BOOTSTRAP_BIN=$(abspath $(BIN)) $(GO) test -count=1 -tags e2e -v -run '^TestDemoUpgrade$$' ./e2e/

lab: deps testbin argocd bin/lab ## start the local lab on loopback and print its site profile; Ctrl-C stops it
	bin/lab up

# Always rebuilt (go build is incremental); a file target so demo and lab can name it.
.PHONY: bin/lab
bin/lab:
	@$(PHASE) "go build bin/lab (the local lab)" $(GO) build -o bin/lab ./e2e/lab

bench: deps build ## Go benchmarks, then bootstrap mirror vs skopeo/regctl/cp (bench/mirror.sh) and the ISO views (bench/iso.sh)
	$(GO) test -run '^$$' -bench . -benchtime 1x -benchmem $(PKGS)
	bench/mirror.sh
	bench/iso.sh

fuzz: ## the hostile-input fuzz targets (archive part, ISC, journal, profile), FUZZTIME each (default 60s); make test runs their seed corpus
	FUZZTIME=$(or $(FUZZTIME),60s) scripts/fuzz.sh

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKGS)

clean: ## remove build outputs
	rm -rf bin
