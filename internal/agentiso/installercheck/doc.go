// Package installercheck is a separate test module that holds bootstrap's generated
// install-config.yaml and agent-config.yaml (the golden files of internal/agentiso, kept equal to
// what Render writes by TestRenderGolden) against the OpenShift installer's own types and
// validation. It lives in its own module because github.com/openshift/installer pulls in every
// cloud platform (hundreds of modules) and conflicts with the client-go the binary uses.
package installercheck
