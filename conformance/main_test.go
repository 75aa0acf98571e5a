package conformance

import (
	"os"
	"testing"

	"github.com/pmauthority/pmauthority/internal/pgtest"
)

// TestMain runs the tests through pgtest.Main, which stops the throwaway
// PostgreSQL of the cluster tests (started only when one asks for it).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
