import { IsBoolean, IsInt, IsNumber, IsOptional, Matches, Max, Min } from 'class-validator';

/** Body of `PUT /v1/admin/simulator`: the schedule the load test (or a person) wants. */
export class SimulatorScheduleDto {
  @IsInt()
  @Min(1)
  @Max(100_000)
  orders!: number;

  /**
   * Tracking updates per second per order: the exact steady rate with `lifecycle: false`,
   * the rate while shipped or out for delivery with `lifecycle: true`.
   */
  @IsNumber()
  @Min(0.001)
  @Max(1_000)
  ratePerOrder!: number;

  /**
   * true (default): the demo's life cycle (dwell times per status, some cancellations);
   * false: orders are created and shipped, then publish tracking updates at a steady rate.
   */
  @IsOptional()
  @IsBoolean()
  lifecycle?: boolean;

  @IsOptional()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$/)
  prefix?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  durationMs?: number;

  /** Simulated orders are spread over this many customers (`customer-<n % customers>`). */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  customers?: number;

  /** Start the clock at once (default), or leave the schedule ready for `POST .../start`. */
  @IsOptional()
  @IsBoolean()
  autoStart?: boolean;
}
