// Package site owns the site profile: the one declarative input of a run. It defines the types,
// decodes YAML strictly with line numbers, fills defaults and validates every rule at once.
//
// Use:
//
//	s, warnings, err := site.LoadValidated("site.yaml")   // err is *site.Errors when invalid
//	if site.IsInvalid(err) { ... exit code 3 ... }
//	pw, err := site.ReadSecret(s.Nodes[0].BMC.Password)    // read at the moment of use
//
// Decoding (Parse, Load) walks the yaml.v3 node tree itself instead of yaml.Unmarshal, so that
// every problem is collected rather than only the first, each with file:line:column and a field
// path like nodes[2].bmc.address. Unknown fields are errors (with a "did you mean"); top-level
// fields starting with "x-" are ignored so anchors can live there and be merged with <<.
// Aliases are expanded against a node budget, so a "billion laughs" profile is refused.
//
// Validate returns Problems: errors and warnings (a separate severity: insecure TLS, an
// -ata-N root device, an unset secret environment variable), sorted by position. It never
// reads a secret file except a password or token (to refuse short ones); secret files are
// stat'ed (mode & 0o077 must be 0). It reads the SSH public key and the trust bundles, whose
// content install-config carries. Problem messages
// never contain secret values: a secret written inline is reported without echoing it.
//
// Referenced files and the example profiles: Validate treats a missing file as an error. The
// MissingFilesAsWarnings option (`bootstrap validate --allow-missing-files`) downgrades that to
// a warning for reviewing a profile away from the jump host; files that exist are still checked
// in full. The profiles test validates each example twice: in an empty directory with that
// option (the only warnings allowed are missing files plus the listed intentional ones), then
// with every named file created (secrets 0600) and the option off, where it must be clean.
//
// # Parity with openshift-install
//
// A profile that passes Validate renders an install-config.yaml and agent-config.yaml that
// `openshift-install agent create image` accepts: the installercheck module proves it on a
// corpus of generated profiles and on a list of mutations, each loaded by the installer's own
// code (internal/agentiso/corpus_test.go, testdata/installer-corpus/mutations.yaml; run by
// scripts/installercheck.sh in `make test`). The installer's rules and where bootstrap checks
// them (the messages quote the installer's wording; "=" same rule, "+" stricter, and why):
//
//	installer rule (pkg/...)                          bootstrap check (file)                 parity
//	metadata.name: DNS-1123, <= 54, no '.'            cluster.name (validate_cluster.go)     + a DNS label
//	  (validate.OnPremClusterName)
//	baseDomain: lowercase RFC 1123 subdomain,         cluster.baseDomain (validate_cluster)  + no trailing dot, labels <= 63
//	  trailing dot accepted; name.baseDomain too        (one spelling for the DNS checks and the certificates)
//	networkType: OVNKubernetes (SDN, Kuryr refused)   cluster.networking.networkType         =
//	machine/cluster/service CIDRs: network address,   prefix (validate_cluster.go)           =
//	  address specified, pairwise disjoint
//	no overlap with OVN join/transit/masquerade       ovnReserved (validate_network.go)      =
//	  100.64/16 100.88/16 169.254.0/17 fd98::/64 fd97::/64 fd69::/112
//	service network >= /12 (IPv4), >= /108 (IPv6)     serviceSize (validate_network.go)      =
//	hostPrefix >= CIDR length; 64 for IPv6; one       clusterNetwork[].hostPrefix            + <= address bits - 2 (room for a node's pods)
//	  value for every IPv4 cluster network
//	stack from the service networks: dual-stack =     families (validate_network.go)         + one service network per family for
//	  exactly two service networks and both                                                    IPv6 too; pod and service networks of the same
//	  families in every list; IPv4: one                                                        families; the machine network holds them
//	VIPs (baremetal): required, <= 2, one per         vips, vipFamilies (validate_cluster,   + a VIP is no node's own address (keepalived
//	  family, in a machine network, API != ingress,   validate_network.go)                     moves it); platform none takes no VIPs
//	  first VIP's family = each list's primary
//	controlPlane replicas 1, 3, 4, 5 (not 2); SNO:    topology (validate_cluster.go)         + 4 and 5 only from 4.18 on x86_64
//	  platform none/external, 0 compute
//	agent-config additionalNTPSources: IP or          ntpSource (validate_services.go)       =
//	  lowercase RFC 1123 name ("NTP server is not a valid IP or domain name"): no port
//	rendezvousIP: an IP, not a worker's address       rendezvous (validate_cluster.go)       + must be a control-plane node's static
//	                                                                                           address (else the agents wait forever)
//	AgentClusterInstall (asset graph, not install-    hostPrefixRoom (validate_podnet.go)    + room for 4 nodes when there is more than one
//	  config): hostPrefix <= bits-7 (25 for IPv4);                                             (the assisted service's rule on the rendezvous
//	  2^(hostPrefix-len) >= number of hosts                                                    host)
//	sshKey: ssh.ParseAuthorizedKey                    sshPublicKey (validate_content.go)     + not empty; a private key refused (it would be
//	                                                                                           copied into install-config and the ISO)
//	additionalTrustBundle: PEM blocks, each an X.509  trustBundle (validate_content.go)      + no TRUSTED CERTIFICATE, key or other block
//	  certificate (validate.CABundle)                                                          (rendering would drop it silently)
//	hosts[].interfaces: >= 1, MACs unicast EUI-48,    interfaces (validate_nodes.go)         + bootMAC among them; names are Linux names
//	  unique across hosts
//	hosts[].role: master, worker (arbiter)            nodes[].role                           + arbiter not offered
//	rootDeviceHints.deviceName: /dev/NAME or          rootDevice (validate_nodes.go)         + by-path only: /dev/sdX moves between boots
//	  /dev/disk/by-path/NAME, NAME without '/'                                                 on Dell (RHEL 9 probes in parallel); -ata-N
//	                                                                                           vs -ata-N.0 by release
//	hosts[].hostname: unchecked by the installer;     nodes[].name (validate_nodes.go)       = assisted service's rule (labels of RFC 1123)
//	  the assisted service takes a lowercase RFC 1123
//	  name <= 253, not localhost
//	pullSecret: an auths entry with auth              registry.authFile (agentiso render)    = the mirror's entry only
//	registry host in imageDigestSources               registry.host (validate_services.go)   + lower case (CRI-O matches it as written)
//	networkConfig: nmstatectl gc (not packaged here)  nmstateRules (nmstate_rules.go)        = types (NMStateTypes), states, VLAN id
//	                                                                                           1-4094, bond modes by name and options per
//	                                                                                           mode, ports that exist and belong to one
//	                                                                                           bond, MTU 68-65535 (1280 with IPv6), VLAN MTU
//	                                                                                           <= base, routes' next hop on-link
//	assisted service: a host with no address in the  networks (validate_cluster.go)         = per node; addresses outside it (storage,
//	  machine network is held back                                                             backend VLANs) are fine beside one inside
//
// A node named by its FQDN (gpu-0.gpu05.ai.example.com) is accepted: agent-config's hostname is
// the name as written, so the host's hostname and its Kubernetes Node name are the full FQDN,
// not its first label.
//
// profiles/schema.json is generated from the types by Schema:
//
//go:generate go test -run ^TestSchemaUpToDate$ -update .
package site
