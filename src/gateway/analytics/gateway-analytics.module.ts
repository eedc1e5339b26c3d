import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AnalyticsIngestController } from './analytics-ingest.controller';
import { AnalyticsIngestService } from './analytics-ingest.service';
import { AnalyticsRollupEntity } from './analytics-rollup.entity';

@Module({
  imports: [TypeOrmModule.forFeature([AnalyticsRollupEntity])],
  controllers: [AnalyticsIngestController],
  providers: [AnalyticsIngestService],
})
export class GatewayAnalyticsModule {}
