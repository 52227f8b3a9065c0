package directives

// want +2 `bad directive: empty value for after`
//
//agentidem:write identity=id after=
func a(id string) {}

// want +2 `bad directive: //agentidem:write needs identity=EXPRS`
//
//agentidem:write name=b
func b(id string) {}

func c() {
	// want +1 `bad directive: //agentidem:ignore needs a reason`
	//agentidem:ignore
	c()
}

//agentidem:read
func good() {} // want good:`read op good wrapper=goodTraced`

type Svc struct{}

//agentidem:write identity=id name=svc.pay after=good entity=acct wrapper=PayT
func (s *Svc) Pay(acct, id string) {} // want Pay:`write op svc.pay wrapper=PayT after=good entity=acct`

func (s *Svc) PayT(acct, id string) {} // want PayT:`wrapper of svc.pay`

// want +2 `bad directive: //agentidem:ignore needs a reason`
//
//agentidem:ignore
func d() {}
