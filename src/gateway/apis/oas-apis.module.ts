import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiDefinitionEntity } from './api-definition.entity';
import { OasApisController } from './oas-apis.controller';
import { OasApisService } from './oas-apis.service';
import { OasValidationPool } from './oas-validation.pool';

@Module({
  imports: [TypeOrmModule.forFeature([ApiDefinitionEntity])],
  controllers: [OasApisController],
  providers: [OasApisService, OasValidationPool],
})
export class OasApisModule {}
