// Package benchproc runs the child processes of the load generators in
// bench/ (httpbench, collabbench, wsbench): servers on free loopback
// ports, each with its log, stopped with SIGTERM and then SIGKILL, and
// all killed when the generator is interrupted, so that none outlives it.
// It also holds the small helpers the generators share: /proc readings,
// the repository's root, loopback checks and progress lines.
package benchproc
