// Package stages turns each domain package into a pipeline.Stage: preflight, mirror, iso, boot,
// install, configure and handoff, in the order of the table in stages.go. It holds adapters
// only; the work itself is done by the domain packages (mirror, agentiso, bmc, install,
// cluster, handoff, isoserver), which never see the pipeline.
//
// The adapter contract, for every stage here:
//   - Inputs reads the validated site (and files it names, hashed by content; never a secret
//     value) and returns what the stage's fingerprint covers: when it changes, the stage runs.
//   - Run builds the domain package's typed options from env (site, work dir, earlier outputs
//     read through their OutputKey in outputs.go), calls the domain function, records each
//     finished step with env.Steps (so a resumed run skips it), turns the domain's progress
//     callbacks into pipeline.Events, and returns the stage's typed output for the journal.
//   - Verify, where a stage has one, checks read-only that the world still matches the last
//     success; Plan, where it has one, says what Run would do and changes nothing.
//   - An adapter never prints, never writes the journal itself and never chooses an exit code:
//     the runner journals, cmd/ renders and decides.
//
// Long-lived helpers that outlive a stage (the ISO server) are owned by the command's session
// and handed to the stages that need them (WithISOServer, ServeISO).
package stages
