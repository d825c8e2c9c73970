// The read cost of AWS ClockBound's own client, for docs/PERFORMANCE.md ("Bounded reads against ClockBound"):
// built with cargo (not part of the CMake build), run inside tests/fleet's namespaces by fleet_run clockbound-perf
// (FLEET_CB_BENCH). Prints the median of 7 runs of N calls to ClockBoundClient::now().
use clock_bound_client::ClockBoundClient;
use std::time::Instant;
fn main() {
    let n: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(2_000_000);
    let mut c = ClockBoundClient::new().expect("ClockBound segment");
    let mut v = Vec::new();
    let mut sink = 0i64;
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..n {
            let r = c.now().expect("now");
            sink = sink.wrapping_add(r.earliest.tv_nsec() as i64);
        }
        v.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("clockbound_client_now_ns {:.1} (runs {:?}) {}", v[3], v, sink & 1);
}
