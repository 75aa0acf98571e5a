package memstore_test

import (
	"testing"

	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
}
