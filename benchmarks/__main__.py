from benchmarks.throughput import main

main()
