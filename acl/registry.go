package acl

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"shardis/internal/atomicfile"
)

// Registry is a server's set of users, with the default user that connections start as.
// Its zero value is ready to use (the default user is made on first use: on, nopass, every
// permission). It is safe for concurrent use; users' permissions are read without its lock.
type Registry struct {
	once  sync.Once
	mu    sync.RWMutex
	users map[string]*User
	def   *User

	// PubsubAll, when set, reports acl-pubsub-default: whether new users (and "reset") get
	// allchannels. Unset means resetchannels, Redis 7.0's default.
	PubsubAll func() bool

	Log Log
}

func (r *Registry) init() {
	r.once.Do(func() {
		r.users = make(map[string]*User)
		r.def = &User{Name: "default"}
		st := newUserState(Commands(), true)
		st.on, st.nopass = true, true
		root := st.selectors[0]
		root.setAll(true)
		root.allKeys = true
		r.def.state.Store(st.seal())
		r.users["default"] = r.def
	})
}

func (r *Registry) pubsubAll() bool { return r.PubsubAll != nil && r.PubsubAll() }

// Default returns the default user.
func (r *Registry) Default() *User {
	r.init()
	return r.def
}

// Get returns the user named name, or nil.
func (r *Registry) Get(name string) *User {
	r.init()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.users[name]
}

// Users returns every user, by name (bytewise order, as Redis's radix tree).
func (r *Registry) Users() []*User {
	r.init()
	r.mu.RLock()
	out := make([]*User, 0, len(r.users))
	for _, u := range r.users {
		out = append(out, u)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AuthRequired reports whether a new connection must authenticate: the default user takes
// a password or is off.
func (r *Registry) AuthRequired() bool {
	st := r.Default().state.Load()
	return !st.nopass || !st.on
}

// Authenticate returns the user that name and pass authenticate as, or nil.
func (r *Registry) Authenticate(name, pass []byte) *User {
	u := r.Get(string(name))
	if u == nil || !u.checkPassword(pass) {
		return nil
	}
	return u
}

// ValidName reports whether name may name a user (no spaces or NUL bytes).
func ValidName(name string) bool { return !hasSpace(name) }

// SetUser applies ops (already merged: see MergeSelectors) to the user named name, making
// it when it does not exist. Nothing changes unless every rule applies; the error is a
// *RuleError naming the rule. It returns the user and whether its pub/sub connections must
// be checked (a channel permission was taken away).
func (r *Registry) SetUser(name string, ops []string) (*User, bool, error) {
	r.init()
	t := Commands()
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.users[name]
	var st *userState
	if u != nil {
		st = u.state.Load().clone()
	} else {
		st = newUserState(t, r.pubsubAll())
	}
	for _, op := range ops {
		if op == "" {
			continue
		}
		if msg := st.apply(t, op, r.pubsubAll()); msg != "" {
			return nil, false, &RuleError{Rule: op, Msg: msg}
		}
	}
	st.seal()
	recheck := false
	if u == nil {
		u = &User{Name: name}
		r.users[name] = u
	} else {
		recheck = losesChannels(u.state.Load(), st)
	}
	u.state.Store(st)
	return u, recheck, nil
}

// Delete removes the users named, returning those that existed (their connections are to
// be closed). The default user cannot be removed.
func (r *Registry) Delete(names []string) ([]*User, error) {
	r.init()
	if slices.Contains(names, "default") {
		return nil, fmt.Errorf("The 'default' user cannot be removed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []*User
	for _, n := range names {
		if u := r.users[n]; u != nil {
			delete(r.users, n)
			u.removed.Store(true)
			gone = append(gone, u)
		}
	}
	return gone, nil
}

// SetRequirePass makes requirepass the default user's only password, or makes it nopass when
// pass is empty, as CONFIG SET requirepass does in Redis.
func (r *Registry) SetRequirePass(pass string) {
	op := "nopass"
	if pass != "" {
		op = ">" + pass
	}
	def := r.Default()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := def.state.Load().clone()
	st.apply(Commands(), "resetpass", false)
	st.apply(Commands(), op, false)
	def.state.Store(st.seal())
}

// parseUserLine checks one "user <name> rules..." line (the words already split) and
// returns the name and its merged rules, or Redis's error.
func parseUserLine(words []string) (string, []string, error) {
	if len(words) < 2 || words[0] != "user" {
		return "", nil, fmt.Errorf("should start with user keyword followed by the username")
	}
	if !ValidName(words[1]) {
		return "", nil, fmt.Errorf("username '%s' contains invalid characters", words[1])
	}
	ops, bad := MergeSelectors(words[2:])
	if bad >= 0 {
		return "", nil, fmt.Errorf("Unmatched parenthesis in selector definition")
	}
	return words[1], ops, nil
}

// build makes a new set of users from lines (the words of each "user" line), validating
// every rule; the default user is made as new when no line defines it. errs holds one
// message per problem, prefixed by where(i) for line i.
func (r *Registry) build(lines [][]string, where func(i int) string) (map[string]*userState, []string) {
	t := Commands()
	states := make(map[string]*userState)
	var errs []string
	for i, words := range lines {
		if len(words) == 0 {
			continue
		}
		name, ops, err := parseUserLine(words)
		if err != nil {
			errs = append(errs, where(i)+err.Error()+".")
			continue
		}
		if _, dup := states[name]; dup {
			errs = append(errs, fmt.Sprintf("WARNING: Duplicate user '%s' found on line %d.", name, i+1))
			continue
		}
		st := newUserState(t, r.pubsubAll())
		for _, op := range ops {
			if op == "" {
				continue
			}
			if msg := st.apply(t, strings.Trim(op, "\t\r\n"), r.pubsubAll()); msg != "" {
				errs = append(errs, where(i)+msg+".")
			}
		}
		states[name] = st.seal()
	}
	return states, errs
}

// replace installs states as the users: the default user keeps its identity (connections
// hold it) and takes its new permissions; every other user is new. It returns the users
// that were replaced or removed, whose connections Redis closes.
func (r *Registry) replace(states map[string]*userState) []*User {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []*User
	for n, u := range r.users {
		if n != "default" {
			u.removed.Store(true)
			gone = append(gone, u)
		}
	}
	users := map[string]*User{"default": r.def}
	for n, st := range states {
		if n == "default" {
			r.def.state.Store(st)
			continue
		}
		u := &User{Name: n}
		u.state.Store(st)
		users[n] = u
	}
	if _, ok := states["default"]; !ok {
		st := newUserState(Commands(), true)
		st.on, st.nopass = true, true
		st.selectors[0].setAll(true)
		st.selectors[0].allKeys = true
		r.def.state.Store(st.seal())
	}
	r.users = users
	return gone
}

// LoadConfigured applies the "user" lines of the config file (each as its words), at
// start-up: a "user default" line redefines the default user.
func (r *Registry) LoadConfigured(lines [][]string) error {
	seen := map[string]bool{}
	for _, words := range lines {
		name, ops, err := parseUserLine(words)
		if err != nil {
			return err
		}
		if seen[name] {
			return fmt.Errorf("%s", errDuplicateUser)
		}
		seen[name] = true
		if name == "default" {
			if _, _, err := r.SetUser(name, []string{"reset"}); err != nil {
				return err
			}
		}
		if _, _, err := r.SetUser(name, ops); err != nil {
			re := err.(*RuleError)
			return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", re.Rule, name, re.Msg)
		}
	}
	return nil
}

// LoadFile replaces every user with those of the ACL file at path, as ACL LOAD: nothing
// changes when any line is wrong. It returns the users replaced (their connections are to
// be closed) or Redis's error text.
func (r *Registry) LoadFile(path string) ([]*User, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("Error loading ACLs, opening file '%s': %s", path, errnoText(err))
	}
	var lines [][]string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.Trim(l, " \t\r\n")
		if l == "" {
			lines = append(lines, nil)
			continue
		}
		var words []string
		for _, w := range strings.Split(l, " ") {
			if w != "" {
				words = append(words, w)
			}
		}
		lines = append(lines, words)
	}
	states, errs := r.build(lines, func(i int) string { return fmt.Sprintf("%s:%d: ", path, i+1) })
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s WARNING: ACL errors detected, no change to the previously active ACL rules was performed", strings.Join(errs, " "))
	}
	return r.replace(states), nil
}

// SaveFile writes every user to path in the ACL file format (ACL LIST's lines), replacing the
// file atomically.
func (r *Registry) SaveFile(path string) error {
	var b strings.Builder
	for _, u := range r.Users() {
		b.WriteString("user " + u.Name + " " + u.Describe() + "\n")
	}
	return atomicfile.Replace(path, b.String())
}

// errnoText is the strerror text of a file error ("No such file or directory").
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		s := pe.Err.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
