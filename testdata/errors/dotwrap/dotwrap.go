package dotwrap

import (
	neturl "net/url"
	. "strings"
)

//agentidem:write identity=id wrapper=ToLower
func lower(id string) error { _ = ToUpper(id); return nil }

//agentidem:write identity=id wrapper=neturl
func escape(id string) error { _ = neturl.PathEscape(id); return nil }
