package jobs_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
)

// convertCost models the engine's work per message, so the comparison is
// about a real conversion's cost rather than an empty call.
const convertCost = 200 * time.Microsecond

type benchConverter struct {
	conversionv1.UnimplementedConversionServiceServer
}

func (benchConverter) Convert(_ context.Context, in *conversionv1.ConvertRequest) (*conversionv1.ConvertResponse, error) {
	time.Sleep(convertCost)
	return &conversionv1.ConvertResponse{Result: []string{strings.ToUpper(in.GetMessage())}}, nil
}

// BenchmarkBatchVsSync converts 10,000 items through the queue (CreateBatch,
// workers, completion) and the same items synchronously in a loop through the
// same gRPC converter client, and reports both throughputs and their ratio.
//
//	go test -run '^$' -bench BatchVsSync -benchtime 1x ./services/jobs
func BenchmarkBatchVsSync(b *testing.B) {
	const n = jobs.MaxItems
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	conversionv1.RegisterConversionServiceServer(srv, benchConverter{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	client := conversionv1.NewConversionServiceClient(conn)

	e := newEnv(b)
	svc := e.service(b, client, func(c *jobs.Config) { c.Workers = 16; c.AckWait = time.Minute; c.Clock = time.Now })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.RunWorkers(ctx) }()
	defer func() { cancel(); <-done }()

	msgs := messages(n, func(i int) string { return fmt.Sprintf(":20:BENCH%05d", i) })
	var queued, sync time.Duration
	for b.Loop() {
		start := time.Now()
		j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: msgs})
		if err != nil {
			b.Fatal(err)
		}
		for {
			got, err := e.store.JobByID(ctx, j.ID)
			if err != nil {
				b.Fatal(err)
			}
			if got.Status == jobs.JobCompleted {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		queued += time.Since(start)

		start = time.Now()
		for _, m := range msgs {
			if _, err := client.Convert(ctx, &conversionv1.ConvertRequest{To: "camt.053", Message: m}); err != nil {
				b.Fatal(err)
			}
		}
		sync += time.Since(start)
	}
	items := float64(n * b.N)
	b.ReportMetric(items/queued.Seconds(), "queue-items/s")
	b.ReportMetric(items/sync.Seconds(), "sync-items/s")
	b.ReportMetric(sync.Seconds()/queued.Seconds(), "queue/sync")
}
