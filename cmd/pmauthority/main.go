// Command pmauthority is the ProseMirror collaboration authority: it applies
// ProseMirror steps natively in Go.
//
//	pmauthority apply [--schema NAME|FILE] [--jsonl]   apply steps read from stdin
//	pmauthority transform [--schema NAME|FILE] [--jsonl] run Transform ops read from stdin
//	pmauthority export [--format F] …                  write a document as text, Markdown or HTML
//	pmauthority edit [--schema NAME|FILE]              make edit API edits on a document read from stdin
//	pmauthority import [--schema NAME|FILE]            read Markdown on stdin, write {"doc": …}
//	pmauthority serve [flags]                          run the HTTP server
//	pmauthority token --secret-file F --sub ID [flags] mint an HS256 token
//	pmauthority backup --data DIR --to FILE            copy a SQLite store while it serves
//	pmauthority restore --from FILE --data DIR         put a backup in place
//	pmauthority verify [--data DIR | --store postgres] check every stored document
//	pmauthority version                                the version, commit and build date
//	pmauthority healthcheck [--url URL]                exit 0 when a server's /healthz answers 200
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: pmauthority <command> [flags]

commands:
  apply   apply {"doc": …, "steps": […]} read on stdin, write {"doc": …}
  transform  run {"doc": …, "ops": […]} (Transform methods) read on stdin, write {"doc": …, "steps": […]}
  export  write a document (a JSON file, or one of a --data store) as text, Markdown or HTML
  edit    make the edits of {"doc": …, "edits": […]} read on stdin (docs/edits.md), write {"doc": …, "steps": […]}
  import  read Markdown on stdin, write {"doc": …} as prosemirror-markdown parses it
  serve   run the HTTP server (stateless apply endpoint)
  token   mint an HS256 token for serve --jwt-secret-file (development)
  backup  copy the SQLite store of --data to a file, while a server runs on it
  restore copy a backup into --data as its store
  verify  check every stored document: its snapshot, its steps, its comments
  version print the version, the commit and the build date
  healthcheck  exit 0 when a server's /healthz answers 200, else 1 (for containers)

Run "pmauthority <command> -h" for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "apply":
		return runApply(args[1:], stdin, stdout, stderr)
	case "transform":
		return runTransform(args[1:], stdin, stdout, stderr)
	case "export":
		return runExport(args[1:], stdout, stderr)
	case "edit":
		return runEdit(args[1:], stdin, stdout, stderr)
	case "import":
		return runImport(args[1:], stdin, stdout, stderr)
	case "serve":
		return runServe(args[1:], stderr)
	case "token":
		return runToken(args[1:], stdout, stderr)
	case "backup":
		return runBackup(args[1:], stdout, stderr)
	case "restore":
		return runRestore(args[1:], stdout, stderr)
	case "verify":
		return runVerify(args[1:], stdout, stderr)
	case "healthcheck":
		return runHealthcheck(args[1:], stdout, stderr)
	case "version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "pmauthority: unknown command %q\n\n%s", args[0], usage)
	return 2
}
