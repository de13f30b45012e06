//go:build gcs

package files

import _ "gocloud.dev/blob/gcsblob" // gs://bucket

func init() { delete(unbuiltStores, "gs") }
