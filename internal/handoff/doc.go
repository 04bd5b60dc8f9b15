// Package handoff hands a freshly installed cluster to Argo CD: it installs OpenShift GitOps from
// the mirrored catalog (Namespace, OperatorGroup, Subscription, InstallPlan approval when the profile
// asks for manual approval), waits for the operator's CSV and the Argo CD instance (by the
// operator's ArgoCD resource when the cluster serves that kind, else by the server Deployment),
// writes the repository Secret and the Git server's CA or known_hosts for Argo CD, applies the
// root (app-of-apps) Application and any ApplicationSets, and waits until Argo CD itself reports
// the root application Synced and Healthy, naming the first degraded child when it is not.
//
// From then on Argo CD owns day 2: nothing here touches what the root application deploys.
// Like every domain package it never prints: it takes options and a progress callback.
package handoff
