module example.com/errors

go 1.26.0

require github.com/google/uuid v1.6.0

replace github.com/google/uuid => ./uuidstub
