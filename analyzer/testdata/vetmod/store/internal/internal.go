// Package internal checks and creates through the store's interface, three
// layers above the SQL.
package internal

import (
	"context"

	"example.com/vetmod/store/storage"
)

func SetRoomAlias(ctx context.Context, db storage.Database, alias, room string) (inUse bool, err error) {
	existing, err := db.GetRoomIDForAlias(ctx, alias)
	if err != nil {
		return false, err
	}
	if len(existing) > 0 {
		return true, nil
	}
	if err := db.SetRoomAlias(ctx, alias, room); err != nil { // reported under go vet: the table type is unexported, known through its package's SQLImplFact
		return false, err
	}
	return false, nil
}

func SetRoomAliasOnce(ctx context.Context, db storage.Database, alias, room string) (inUse bool, err error) {
	existing, err := db.GetRoomIDForAlias(ctx, alias)
	if err != nil {
		return false, err
	}
	if len(existing) > 0 {
		return true, nil
	}
	if err := db.SetRoomAliasOnce(ctx, alias, room); err != nil {
		return false, err
	}
	return false, nil
}
