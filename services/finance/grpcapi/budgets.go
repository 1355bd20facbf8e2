package grpcapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

type budgetServer struct {
	financev1.UnimplementedBudgetServiceServer
	svc *budgets.Service
}

type goalServer struct {
	financev1.UnimplementedGoalServiceServer
	svc *budgets.Service
}

func (s *budgetServer) ListBudgets(ctx context.Context, req *financev1.ListBudgetsRequest) (*financev1.ListBudgetsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListBudgetsResponse, error) {
		page, err := s.svc.ListBudgets(ctx, c, finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize})
		if err != nil {
			return nil, err
		}
		return &financev1.ListBudgetsResponse{Data: protos(page.Data, budgetProto), RedactedFields: page.RedactedFields,
			Filtered: page.Filtered, Pagination: pagination(page.NextCursor, page.HasMore)}, nil
	})
}

func (s *budgetServer) GetBudget(ctx context.Context, req *financev1.GetBudgetRequest) (*financev1.GetBudgetResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetBudgetResponse, error) {
		res, err := s.svc.GetBudget(ctx, c, req.GetId())
		if err != nil {
			return nil, err
		}
		return &financev1.GetBudgetResponse{Data: budgetProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *budgetServer) GetBudgetProgress(ctx context.Context, req *financev1.GetBudgetProgressRequest) (*financev1.GetBudgetProgressResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetBudgetProgressResponse, error) {
		res, err := s.svc.GetBudgetProgress(ctx, c, req.GetId(), req.GetMonth())
		if err != nil {
			return nil, err
		}
		return &financev1.GetBudgetProgressResponse{Data: progressProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *budgetServer) SwitchBudgetMethod(ctx context.Context, req *financev1.SwitchBudgetMethodRequest) (*financev1.SwitchBudgetMethodResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.SwitchBudgetMethodResponse, error) {
		// proto3 cannot tell an absent confirm from false; both are refused.
		confirm := req.GetConfirm()
		res, err := s.svc.SwitchBudgetMethod(ctx, c, req.GetMethod(), &confirm, req.GetAlertThresholds())
		if err != nil {
			return nil, err
		}
		return &financev1.SwitchBudgetMethodResponse{
			Data: &financev1.BudgetMethodSwitchResult{NewBudgetId: res.Data.NewBudgetID,
				PreviousBudgetArchived: res.Data.PreviousBudgetArchived},
			RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

// amount formats an exact decimal with at least the currency's minor-unit
// digits.
func amount(d decimal.Decimal, currency string) *string {
	return proto.String(finance.Money{Amount: d, Currency: currency}.AmountString())
}

func metaProto(m budgets.MethodMeta) *financev1.BudgetMethodMeta {
	return &financev1.BudgetMethodMeta{DisplayName: optional(m.DisplayName),
		IsNameEditable: proto.Bool(m.IsNameEditable), HasFixedGroups: proto.Bool(m.HasFixedGroups)}
}

func budgetProto(v budgets.BudgetView) *financev1.Budget {
	b := v.Budget
	out := &financev1.Budget{
		Id:              b.ID,
		Name:            optional(b.Name),
		MethodType:      optional(b.MethodType),
		PeriodType:      optional(b.PeriodType),
		IsActive:        proto.Bool(b.IsActive),
		IncomeType:      optional(b.IncomeType),
		MethodMeta:      metaProto(budgets.MetaFor(b.MethodType)),
		EnabledFeatures: b.EnabledFeatures,
		CreatedAt:       timestamp(&b.CreatedAt),
		Currency:        optional(b.Currency),
		ArchivedAt:      timestamp(b.ArchivedAt),
		Version:         proto.Int32(int32(b.Version)),
		AlertThresholds: b.AlertThresholds,
	}
	if b.ExpectedMonthlyIncome != nil {
		out.ExpectedMonthlyIncome = amount(*b.ExpectedMonthlyIncome, b.Currency)
	}
	switch b.PeriodType {
	case budgets.PeriodMonthlyAnchored:
		out.PeriodAnchorDay = proto.Int32(int32(b.PeriodAnchorDay))
	case budgets.PeriodBiweekly:
		out.PeriodAnchorDate = proto.String(b.PeriodAnchorDate.Format(finance.DateLayout))
	}
	for _, g := range b.Groups {
		tg := &financev1.TargetGroup{Id: g.ID, Name: optional(g.Name), SortOrder: proto.Int32(g.SortOrder),
			AllocationType: optional(g.AllocationType), AllocationValue: proto.String(g.AllocationValue.String()),
			Items: make([]*financev1.BudgetItem, 0, len(g.Items))}
		if g.AllocationType != budgets.AllocPercent {
			tg.AllocationValue = amount(g.AllocationValue, b.Currency)
		}
		for _, it := range g.Items {
			item := &financev1.BudgetItem{Id: it.ID, CategoryId: optional(it.CategoryID),
				AllocatedAmount: amount(it.AllocatedAmount, b.Currency)}
			if spent, ok := v.ItemSpent[it.ID]; ok {
				item.SpentAmount = amount(spent, b.Currency)
			}
			tg.Items = append(tg.Items, item)
		}
		out.TargetGroups = append(out.TargetGroups, tg)
	}
	return out
}

func progressProto(p budgets.BudgetProgress) *financev1.BudgetProgress {
	cur := p.Currency
	out := &financev1.BudgetProgress{
		BudgetId:        p.BudgetID,
		MethodType:      optional(p.MethodType),
		TotalIncome:     amount(p.TotalIncome, cur),
		TotalAllocated:  amount(p.TotalAllocated, cur),
		TotalSpent:      amount(p.TotalSpent, cur),
		Remaining:       amount(p.Remaining, cur),
		AnomalyTotal:    amount(p.AnomalyTotal, cur),
		MethodMeta:      metaProto(p.MethodMeta),
		PeriodStart:     proto.String(p.PeriodStart.Format(finance.DateLayout)),
		PeriodEnd:       proto.String(p.PeriodEnd.Format(finance.DateLayout)),
		PeriodLabel:     optional(p.PeriodLabel),
		IsCurrentPeriod: proto.Bool(p.IsCurrentPeriod),
		Currency:        optional(cur),
		Groups:          make([]*financev1.GroupProgress, 0, len(p.Groups)),
		Anomalies:       make([]*financev1.BudgetAnomaly, 0, len(p.Anomalies)),
	}
	if p.ExpectedIncome != nil {
		out.ExpectedIncome = amount(*p.ExpectedIncome, cur)
	}
	for _, g := range p.Groups {
		gp := &financev1.GroupProgress{
			GroupId:                g.GroupID,
			GroupName:              optional(g.GroupName),
			Allocated:              amount(g.Allocated, cur),
			Spent:                  amount(g.Spent, cur),
			Remaining:              amount(g.Remaining, cur),
			RolloverAmount:         amount(g.RolloverAmount, cur),
			UpcomingRecurringTotal: amount(g.UpcomingRecurringTotal, cur),
			PhaseActive:            proto.Bool(g.PhaseActive),
		}
		if g.SpentPercentage != nil {
			// Rounded once, here: two places.
			gp.SpentPercentage = proto.Float64(g.SpentPercentage.Round(2).InexactFloat64())
		}
		for _, it := range g.Items {
			gp.Items = append(gp.Items, &financev1.BudgetItem{Id: it.ItemID, CategoryId: optional(it.CategoryID),
				AllocatedAmount: amount(it.Allocated, cur), SpentAmount: amount(it.Spent, cur)})
		}
		out.Groups = append(out.Groups, gp)
	}
	for _, a := range p.Anomalies {
		out.Anomalies = append(out.Anomalies, &financev1.BudgetAnomaly{
			TransactionId:     a.TransactionID,
			Amount:            amount(a.Amount, cur),
			TransactionDate:   proto.String(a.TransactionDate.Format(finance.DateLayout)),
			Status:            optional(a.Status),
			CoveredByGoal:     optional(a.CoveredByGoal),
			CoveredByPlanLine: optional(a.CoveredByPlanLine),
		})
	}
	return out
}

func (s *goalServer) ListGoals(ctx context.Context, req *financev1.ListGoalsRequest) (*financev1.ListGoalsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListGoalsResponse, error) {
		page, err := s.svc.ListGoals(ctx, c, finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize})
		if err != nil {
			return nil, err
		}
		return &financev1.ListGoalsResponse{Data: protos(page.Data, goalProto), RedactedFields: page.RedactedFields,
			Filtered: page.Filtered, Pagination: pagination(page.NextCursor, page.HasMore)}, nil
	})
}

func (s *goalServer) GetGoal(ctx context.Context, req *financev1.GetGoalRequest) (*financev1.GetGoalResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.GetGoalResponse, error) {
		res, err := s.svc.GetGoal(ctx, c, req.GetId())
		if err != nil {
			return nil, err
		}
		return &financev1.GetGoalResponse{Data: goalProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func goalProto(v budgets.GoalView) *financev1.Goal {
	g, p, cur := v.Goal, v.Progress, v.Goal.Currency
	out := &financev1.Goal{
		Id:                g.ID,
		Name:              optional(g.Name),
		Description:       optional(g.Description),
		GoalType:          optional(g.GoalType),
		Status:            optional(g.Status),
		TargetAmount:      amount(g.TargetAmount, cur),
		CurrentAmount:     amount(p.CurrentAmount, cur),
		Currency:          optional(cur),
		FundingSourceType: optional(g.FundingSourceType),
		TrackingMode:      optional(g.TrackingMode),
		SortOrder:         proto.Int32(g.SortOrder),
		ShowInDigest:      proto.Bool(g.ShowInDigest),
		CreatedAt:         timestamp(&g.CreatedAt),
		UpdatedAt:         timestamp(&g.UpdatedAt),
		CompletedAt:       timestamp(g.CompletedAt),
		Version:           proto.Int32(int32(g.Version)),
	}
	if g.TargetDate != nil {
		out.TargetDate = proto.String(g.TargetDate.Format(finance.DateLayout))
	}
	for _, l := range g.AccountLinks {
		out.AccountLinks = append(out.AccountLinks, &financev1.GoalAccountLink{AccountId: optional(l.AccountID),
			AccountType: optional(l.AccountType), LinkRole: optional(l.LinkRole)})
	}
	for _, l := range g.BudgetLinks {
		out.BudgetLinks = append(out.BudgetLinks, &financev1.GoalBudgetLink{BudgetItemId: optional(l.BudgetItemID),
			ContributionAmount: amount(l.ContributionAmount, cur), IsActive: proto.Bool(l.IsActive)})
	}
	for _, l := range g.SpendingPlan {
		out.SpendingPlan = append(out.SpendingPlan, &financev1.GoalPlanLine{Name: optional(l.Name),
			CategoryId: optional(l.CategoryID), PlannedAmount: amount(l.PlannedAmount, cur)})
	}
	gp := &financev1.GoalProgress{
		GoalId:          proto.String(g.ID),
		CurrentAmount:   amount(p.CurrentAmount, cur),
		TargetAmount:    amount(p.TargetAmount, cur),
		RemainingAmount: amount(p.RemainingAmount, cur),
	}
	if p.ProgressPct != nil {
		gp.ProgressPct = proto.String(p.ProgressPct.StringFixed(2))
	}
	if p.MonthlyContributionNeeded != nil {
		gp.MonthlyContributionNeeded = amount(*p.MonthlyContributionNeeded, cur)
	}
	if p.MonthlyShortfall != nil {
		gp.MonthlyShortfall = amount(*p.MonthlyShortfall, cur)
	}
	if p.DaysRemaining != nil {
		gp.DaysRemaining = proto.Int32(int32(*p.DaysRemaining))
	}
	if p.ProjectedCompletionDate != nil {
		gp.ProjectedCompletionDate = proto.String(p.ProjectedCompletionDate.Format(finance.DateLayout))
	}
	if p.LastContributionAt != nil {
		gp.LastContributionAt = timestamppb.New(*p.LastContributionAt)
	}
	out.Progress = gp
	return out
}

func (s *accountServer) ListAccounts(ctx context.Context, req *financev1.ListAccountsRequest) (*financev1.ListAccountsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ListAccountsResponse, error) {
		page, err := s.svc.ListAccounts(ctx, c, finance.PageQuery{Cursor: req.GetCursor(), PageSize: req.PageSize})
		if err != nil {
			return nil, err
		}
		return &financev1.ListAccountsResponse{Data: protos(page.Data, accountProto), RedactedFields: page.RedactedFields,
			Filtered: page.Filtered, Pagination: pagination(page.NextCursor, page.HasMore)}, nil
	})
}

func accountProto(a finance.Account) *financev1.Account {
	return &financev1.Account{
		Id:                 a.ID,
		ConnectionId:       optional(a.ConnectionID),
		Name:               optional(a.Name),
		Nickname:           optional(a.Nickname),
		Type:               optional(a.Type),
		Subtype:            optional(a.Subtype),
		Mask:               optional(a.Mask),
		Currency:           optional(a.Currency),
		Balance:            money(&a.Balance),
		AvailableBalance:   money(a.AvailableBalance),
		IsHidden:           proto.Bool(a.IsHidden),
		Provider:           optional(a.Provider),
		InstitutionName:    optional(a.InstitutionName),
		InstitutionLogoUrl: optional(a.InstitutionLogoURL),
		CreatedAt:          timestamp(&a.CreatedAt),
		UpdatedAt:          timestamp(&a.UpdatedAt),
	}
}

func (s *budgetServer) UpdateBudgetAllocations(ctx context.Context, req *financev1.UpdateBudgetAllocationsRequest) (*financev1.UpdateBudgetAllocationsResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.UpdateBudgetAllocationsResponse, error) {
		u := budgets.AllocationUpdate{BudgetID: req.GetId(), ExpectedVersion: int64(req.GetExpectedVersion()),
			AlertThresholds: req.GetAlertThresholds(), ClearAlertThresholds: req.GetClearAlertThresholds()}
		for _, it := range req.GetItems() {
			u.Items = append(u.Items, budgets.ItemAllocation{ID: it.GetId(), AllocatedAmount: it.GetAllocatedAmount()})
		}
		for _, g := range req.GetGroups() {
			u.Groups = append(u.Groups, budgets.GroupAllocation{ID: g.GetId(), AllocationValue: g.GetAllocationValue()})
		}
		res, err := s.svc.UpdateBudgetAllocations(ctx, c, u)
		if err != nil {
			return nil, err
		}
		if err := markReplayed(ctx, res.Replayed); err != nil {
			return nil, err
		}
		return &financev1.UpdateBudgetAllocationsResponse{Data: budgetProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *goalServer) CreateGoal(ctx context.Context, req *financev1.CreateGoalRequest) (*financev1.CreateGoalResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.CreateGoalResponse, error) {
		in := budgets.GoalInput{Description: req.Description, GoalType: req.GoalType, CurrentAmount: req.CurrentAmount,
			Currency: req.Currency, TargetDate: req.TargetDate, TrackingMode: req.TrackingMode, SortOrder: req.SortOrder,
			ShowInDigest: req.ShowInDigest}
		// proto3 strings cannot be absent: empty is "not sent", so the service
		// names the field as required.
		if req.GetName() != "" {
			in.Name = proto.String(req.GetName())
		}
		if req.GetTargetAmount() != "" {
			in.TargetAmount = proto.String(req.GetTargetAmount())
		}
		if len(req.GetAccountLinks()) > 0 {
			in.AccountLinks = ptr(accountLinksFrom(req.GetAccountLinks()))
		}
		if len(req.GetBudgetLinks()) > 0 {
			in.BudgetLinks = ptr(budgetLinksFrom(req.GetBudgetLinks()))
		}
		if len(req.GetSpendingPlan()) > 0 {
			in.SpendingPlan = ptr(planLinesFrom(req.GetSpendingPlan()))
		}
		res, err := s.svc.CreateGoal(ctx, c, in)
		if err != nil {
			return nil, err
		}
		return &financev1.CreateGoalResponse{Data: goalProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *goalServer) UpdateGoal(ctx context.Context, req *financev1.UpdateGoalRequest) (*financev1.UpdateGoalResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.UpdateGoalResponse, error) {
		in := budgets.GoalInput{Name: req.Name, Description: req.Description, GoalType: req.GoalType, Status: req.Status,
			TargetAmount: req.TargetAmount, CurrentAmount: req.CurrentAmount, TargetDate: req.TargetDate,
			TrackingMode: req.TrackingMode, SortOrder: req.SortOrder, ShowInDigest: req.ShowInDigest}
		if l := req.GetAccountLinks(); l != nil {
			var links []*financev1.GoalAccountLink
			if err := listOf(l, "account_links", &links); err != nil {
				return nil, err
			}
			in.AccountLinks = ptr(accountLinksFrom(links))
		}
		if l := req.GetBudgetLinks(); l != nil {
			var links []*financev1.GoalBudgetLink
			if err := listOf(l, "budget_links", &links); err != nil {
				return nil, err
			}
			in.BudgetLinks = ptr(budgetLinksFrom(links))
		}
		if l := req.GetSpendingPlan(); l != nil {
			var lines []*financev1.GoalPlanLine
			if err := listOf(l, "spending_plan", &lines); err != nil {
				return nil, err
			}
			in.SpendingPlan = ptr(planLinesFrom(lines))
		}
		res, err := s.svc.UpdateGoal(ctx, c, req.GetId(), int64(req.GetExpectedVersion()), in)
		if err != nil {
			return nil, err
		}
		if err := markReplayed(ctx, res.Replayed); err != nil {
			return nil, err
		}
		return &financev1.UpdateGoalResponse{Data: goalProto(res.Data), RedactedFields: res.RedactedFields,
			Filtered: res.Filtered}, nil
	})
}

func (s *goalServer) DeleteGoal(ctx context.Context, req *financev1.DeleteGoalRequest) (*financev1.DeleteGoalResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.DeleteGoalResponse, error) {
		var version *int64
		if req.ExpectedVersion != nil {
			version = ptr(int64(req.GetExpectedVersion()))
		}
		res, err := s.svc.DeleteGoal(ctx, c, req.GetId(), version)
		if err != nil {
			return nil, err
		}
		return &financev1.DeleteGoalResponse{Data: &financev1.GoalDeleteResult{Deleted: res.Data.Deleted},
			RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}

func ptr[T any](v T) *T { return &v }

// listOf reads a PATCH list (a google.protobuf.ListValue, so [] and absent
// differ) into typed messages: each element must be an object of the
// message's JSON shape, else 400 naming the element.
func listOf[M proto.Message](l *structpb.ListValue, field string, out *[]M) error {
	for i, v := range l.GetValues() {
		raw, err := protojson.Marshal(v)
		var m M
		m = m.ProtoReflect().Type().New().Interface().(M)
		if err == nil {
			_, isObject := v.GetKind().(*structpb.Value_StructValue)
			if !isObject {
				err = errors.New("not an object")
			} else {
				err = protojson.Unmarshal(raw, m)
			}
		}
		if err != nil {
			return problem.New(problem.InvalidInput,
				fmt.Sprintf("%s[%d] must be an object of the documented shape", field, i)).WithField(fmt.Sprintf("%s[%d]", field, i))
		}
		*out = append(*out, m)
	}
	return nil
}

func accountLinksFrom(in []*financev1.GoalAccountLink) []budgets.GoalAccountLinkInput {
	out := make([]budgets.GoalAccountLinkInput, 0, len(in))
	for _, l := range in {
		// account_type is read from the account; a client sending back what
		// it read is not refused for it.
		out = append(out, budgets.GoalAccountLinkInput{AccountID: l.GetAccountId(), LinkRole: l.GetLinkRole()})
	}
	return out
}

func budgetLinksFrom(in []*financev1.GoalBudgetLink) []budgets.GoalBudgetLinkInput {
	out := make([]budgets.GoalBudgetLinkInput, 0, len(in))
	for _, l := range in {
		out = append(out, budgets.GoalBudgetLinkInput{BudgetItemID: l.GetBudgetItemId(),
			ContributionAmount: l.GetContributionAmount(), IsActive: l.IsActive})
	}
	return out
}

func planLinesFrom(in []*financev1.GoalPlanLine) []budgets.GoalPlanLineInput {
	out := make([]budgets.GoalPlanLineInput, 0, len(in))
	for _, l := range in {
		out = append(out, budgets.GoalPlanLineInput{Name: l.GetName(), CategoryID: l.GetCategoryId(),
			PlannedAmount: l.GetPlannedAmount()})
	}
	return out
}
