package testdb

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"testing"

	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// DemoRecords is the demo dataset's records without their files (no PDF or
// photo is stored, and no record carries a file's checksum), loaded once per
// test process: each test gets a copy of its own.
var DemoRecords = NewDataset("demo records", func(ctx context.Context, st *store.Store) error {
	_, err := datagen.Load(ctx, st.Client, nil, datagen.DemoSeed, datagen.Demo)
	return err
})

// DemoWithFiles is the demo dataset with every PDF and photo: rendering them
// is most of the cost of a load under the race detector, so they too are
// made once per test process and kept in memory.
var DemoWithFiles = newFileDataset("demo with files", datagen.DemoSeed, datagen.Demo)

// FileDataset is a Dataset whose records name stored files, which
// each test's file store gets a copy of.
type FileDataset struct {
	*Dataset
	files []storedFile // set by the fill, read after it
}

type storedFile struct {
	Key  string
	Data []byte
}

func newFileDataset(name string, seed uint64, size datagen.Size) *FileDataset {
	d := &FileDataset{}
	d.Dataset = NewDataset(name, func(ctx context.Context, st *store.Store) error {
		// The key signs URLs only, never what is stored: any will do.
		fs, err := files.Open(ctx, files.Options{URL: "mem://", SigningKey: []byte("testdb: 32 bytes of signing key.")})
		if err != nil {
			return err
		}
		defer fs.Close()
		if _, err := datagen.Load(ctx, st.Client, fs, seed, size); err != nil {
			return err
		}
		d.files, err = filesNamed(ctx, st, fs)
		return err
	})
	d.saveAside = func() ([]byte, error) {
		var b bytes.Buffer
		err := gob.NewEncoder(&b).Encode(d.files)
		return b.Bytes(), err
	}
	d.loadAside = func(data []byte) error { return gob.NewDecoder(bytes.NewReader(data)).Decode(&d.files) }
	return d
}

// filesNamed reads back every file the records name: the PDFs of the
// inventories with a checksum and the photos with one.
func filesNamed(ctx context.Context, st *store.Store, fs *files.Store) ([]storedFile, error) {
	ctx = tenant.Unrestricted(ctx, "testdb: reading the files of a generated dataset")
	var keys []string
	ids, err := st.Client.Inventory.Query().Where(inventory.PdfSha256NotNil()).IDs(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		keys = append(keys, files.PDFKey(id.String()))
	}
	refs, err := st.Client.Photo.Query().Where(photo.Sha256NotNil()).Select(photo.FieldStorageReference).Strings(ctx)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		key, err := files.PhotoKey(ref)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the dataset names no stored file")
	}
	stored := make([]storedFile, len(keys))
	for i, key := range keys {
		data, err := fs.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("reading back %s: %w", key, err)
		}
		stored[i] = storedFile{key, data}
	}
	return stored, nil
}

// Open returns a store on a copy of the dataset's records and puts a copy of
// its files into fs.
func (d *FileDataset) Open(tb testing.TB, fs *files.Store, opts ...store.Option) *store.Store {
	tb.Helper()
	st := d.Dataset.Open(tb, opts...)
	d.PutFiles(tb, fs)
	return st
}

// PutFiles writes the dataset's files into fs.
func (d *FileDataset) PutFiles(tb testing.TB, fs *files.Store) {
	tb.Helper()
	d.Fill(tb)
	for _, f := range d.files {
		if _, err := fs.Put(context.Background(), f.Key, f.Data); err != nil {
			tb.Fatalf("storing %s: %v", f.Key, err)
		}
	}
}
