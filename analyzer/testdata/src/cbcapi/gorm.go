package cbcapi

import (
	"context"
	"errors"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

type User struct {
	ID    uint
	Email string
	Name  string
}

type Account struct {
	gorm.Model
	Email string `gorm:"uniqueIndex"`
}

type Store struct {
	g  *gorm.DB
	mu sync.Mutex
}

// First, not found, Create of the same email.
func (s *Store) EnsureUser(email string) error {
	var u User
	err := s.g.Where("email = ?", email).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s.g.Create(&User{Email: email}).Error // want `Create of User runs when First of User \(line 31\) found no record for the same key`
	}
	return err
}

// A struct condition, an early return when found, a create of a
// variable.
func (s *Store) EnsureUserStruct(ctx context.Context, email, name string) (User, error) {
	var u User
	if err := s.g.WithContext(ctx).Where(&User{Email: email}).Take(&u).Error; err == nil {
		return u, nil
	}
	nu := User{Email: email, Name: name}
	err := s.g.WithContext(ctx).Create(&nu).Error // want `Create of User runs when Take of User \(line 42\) found no record for the same key`
	return nu, err
}

// FirstOrCreate is the same SELECT then INSERT.
func (s *Store) FirstOrCreateUser(email string) (User, error) {
	var u User
	err := s.g.Where(User{Email: email}).FirstOrCreate(&u).Error // want `FirstOrCreate of User runs a SELECT and then an INSERT keyed on email`
	return u, err
}

// The twins: a unique index on the key (a racing create fails and its
// retry finds the record), ON CONFLICT, a handled duplicate, a
// transaction, a mutex, another key.
func (s *Store) EnsureAccount(email string) error {
	var a Account
	err := s.g.Where("email = ?", email).First(&a).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s.g.Create(&Account{Email: email}).Error
	}
	return err
}

func (s *Store) FirstOrCreateAccount(email string) (Account, error) {
	var a Account
	err := s.g.Where(Account{Email: email}).FirstOrCreate(&a).Error
	return a, err
}

func (s *Store) FirstOrCreateByID(id uint) (User, error) {
	var u User
	err := s.g.FirstOrCreate(&u, User{ID: id}).Error
	return u, err
}

func (s *Store) EnsureUserOnConflict(email string) error {
	var u User
	err := s.g.Where("email = ?", email).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s.g.Clauses(clause.OnConflict{DoNothing: true}).Create(&User{Email: email}).Error
	}
	return err
}

func (s *Store) EnsureUserDuplicate(email string) error {
	var u User
	err := s.g.Where("email = ?", email).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		err = s.g.Create(&User{Email: email}).Error
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil
		}
	}
	return err
}

func (s *Store) EnsureUserTx(email string) error {
	return s.g.Transaction(func(tx *gorm.DB) error {
		var u User
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("email = ?", email).First(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return tx.Create(&User{Email: email}).Error
		}
		return err
	})
}

func (s *Store) EnsureUserLocked(email string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u User
	err := s.g.Where("email = ?", email).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s.g.Create(&User{Email: email}).Error
	}
	return err
}

func (s *Store) CreateOther(email, other string) error {
	var u User
	err := s.g.Where("email = ?", email).First(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return s.g.Create(&User{Email: other}).Error
	}
	return err
}

// Created only when found: no check-before-create.
func (s *Store) CreateWhenFound(email string) error {
	var u User
	if err := s.g.Where("email = ?", email).First(&u).Error; err != nil {
		return err
	}
	return s.g.Create(&User{Email: email, Name: "copy"}).Error
}
