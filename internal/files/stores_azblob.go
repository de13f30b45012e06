//go:build azblob

package files

import _ "gocloud.dev/blob/azureblob" // azblob://container

func init() { delete(unbuiltStores, "azblob") }
